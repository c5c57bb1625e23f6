package githubfake

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// labelRoles are the roles that may label issues and pull requests (GitHub: triage and up).
var labelRoles = map[string]bool{RoleTriage: true, RoleWrite: true, RoleMaintain: true, RoleAdmin: true}

// addLabels serves POST /repos/{owner}/{repo}/issues/{issue_number}/labels for a pull request:
// it adds the labels as the token's user, records a "labeled" event for each new one, answers
// with the pull request's labels, and then delivers pull_request "labeled" to the repository's
// webhooks (AddHook).
func (s *Server) addLabels(c *call) (int, any, error) {
	var in struct {
		Labels []string `json:"labels"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	number, err := s.labelTarget(c)
	if err != nil {
		return 0, nil, err
	}
	if len(in.Labels) == 0 {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: no labels given")
	}
	for _, l := range in.Labels {
		if s.addLabel(c.repo, number, l, c.login) {
			s.deliverLabelAfter(c, number, l, true)
		}
	}
	return http.StatusOK, s.labelsJSON(c.repo, number), nil
}

// removeLabel serves DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name} for a
// pull request, as addLabels does; a label the pull request does not have is 404 Not Found,
// as on GitHub.
func (s *Server) removeLabel(c *call) (int, any, error) {
	number, err := s.labelTarget(c)
	if err != nil {
		return 0, nil, err
	}
	label, err := url.PathUnescape(c.params["name"]) // "sluice%2Fapprove": the router keeps the escape
	if err != nil {
		return 0, nil, fail(http.StatusNotFound, "Label does not exist")
	}
	name := s.removeLabelOf(c.repo, number, label, c.login)
	if name == "" {
		return 0, nil, fail(http.StatusNotFound, "Label does not exist")
	}
	s.deliverLabelAfter(c, number, name, false)
	return http.StatusOK, s.labelsJSON(c.repo, number), nil
}

// labelTarget returns the pull request a label call names, once the caller may label it.
func (s *Server) labelTarget(c *call) (int, error) {
	number, _ := strconv.Atoi(c.params["issue_number"])
	if c.repo.pulls[number] == nil {
		return 0, fail(http.StatusNotFound, "Not Found")
	}
	if !labelRoles[c.repo.roles[c.login]] {
		return 0, fail(http.StatusForbidden, "Must have triage access to %s/%s to label its pull requests", c.repo.owner, c.repo.name)
	}
	return number, nil
}

// deliverLabelAfter queues the delivery of a label change to the repository's webhooks, sent
// once the call is answered.
func (s *Server) deliverLabelAfter(c *call, number int, label string, added bool) {
	fullName, sender := c.repo.owner+"/"+c.repo.name, c.login
	c.after = append(c.after, func(ctx context.Context) {
		s.deliverToHooks(ctx, fullName, func(ctx context.Context, url string, secret []byte) (Delivery, error) {
			return s.DeliverLabel(ctx, url, secret, fullName, number, label, sender, added)
		})
	})
}

// labelsJSON describes the labels of a pull request as GitHub's label objects.
func (s *Server) labelsJSON(r *repository, number int) []any {
	pr := r.pulls[number]
	out := make([]any, 0, len(pr.labels))
	for i, l := range pr.labels {
		out = append(out, map[string]any{
			"id": int64(i + 1), "node_id": "LA_" + l, "url": s.apiURL("repos/%s/%s/labels/%s", r.owner, r.name, l),
			"name": l, "description": nil, "color": "ededed", "default": false,
		})
	}
	return out
}
