package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxStatusesPerContext is GitHub's cap on statuses per (commit, context).
const maxStatusesPerContext = 1000

// handlers maps each operation of the trimmed description to its handler.
func (s *Server) handlers() map[string]handler {
	m := map[string]handler{
		"apps/create-installation-access-token":   s.createInstallationToken,
		"git/create-commit":                       s.createCommit,
		"git/create-ref":                          s.createRef,
		"git/create-tree":                         s.createTree,
		"git/get-commit":                          s.getCommit,
		"git/get-ref":                             s.getRef,
		"git/get-tree":                            s.getTree,
		"git/update-ref":                          s.updateRef,
		"issues/add-labels":                       s.addLabels,
		"issues/list-events":                      s.listIssueEvents,
		"issues/remove-label":                     s.removeLabel,
		"pulls/create":                            s.createPull,
		"pulls/get":                               s.getPull,
		"pulls/list":                              s.listPulls,
		"repos/create-commit-status":              s.createStatus,
		"repos/get-collaborator-permission-level": s.getPermission,
		"repos/list-commit-statuses-for-ref":      s.listStatuses,
		"repos/list-pull-requests-associated-with-commit": s.listPullsForCommit,
		"teams/get-membership-for-user-in-org":            s.getTeamMembership,
	}
	for op, h := range s.surfaceHandlers() {
		m[op] = h
	}
	for op, h := range s.conversationHandlers() {
		m[op] = h
	}
	return m
}

func decode(c *call, v any) error {
	if err := json.Unmarshal(c.body, v); err != nil {
		return fail(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

func (s *Server) createStatus(c *call) (int, any, error) {
	var in struct {
		State       string  `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	sha := c.params["sha"]
	if c.repo.commits[sha] == nil {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", sha)
	}
	ctxName := "default"
	if in.Context != nil && *in.Context != "" {
		ctxName = *in.Context
	}
	n := 0
	for _, st := range c.repo.statuses[sha] {
		if strings.EqualFold(st.context, ctxName) {
			n++
		}
	}
	if n >= maxStatusesPerContext {
		return 0, nil, fail(http.StatusUnprocessableEntity, "This SHA and context has reached the maximum number of statuses.")
	}
	s.nextID++
	st := &status{id: s.nextID, state: in.State, context: ctxName, creator: c.login, createdAt: s.clock()}
	if in.TargetURL != nil {
		st.targetURL = *in.TargetURL
	}
	if in.Description != nil {
		st.description = *in.Description
	}
	c.repo.statuses[sha] = append(c.repo.statuses[sha], st)
	return http.StatusCreated, s.statusJSON(c.repo, st), nil
}

func (s *Server) listStatuses(c *call) (int, any, error) {
	sha := s.resolve(c.repo, c.params["ref"])
	if sha == "" {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	list := c.repo.statuses[sha]
	items := make([]any, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		items = append(items, s.statusJSON(c.repo, list[i]))
	}
	return http.StatusOK, page(c, items), nil
}

func (s *Server) statusJSON(r *repository, st *status) map[string]any {
	return map[string]any{
		"id":          st.id,
		"node_id":     "S_" + itoa(st.id),
		"url":         s.apiURL("repos/%s/%s/statuses/%d", r.owner, r.name, st.id),
		"state":       st.state,
		"description": nullable(st.description),
		"target_url":  nullable(st.targetURL),
		"context":     st.context,
		"created_at":  stamp(st.createdAt),
		"updated_at":  stamp(st.createdAt),
		"creator":     s.user(st.creator),
	}
}

func (s *Server) listPullsForCommit(c *call) (int, any, error) {
	sha := c.params["commit_sha"]
	if c.repo.commits[sha] == nil {
		return 0, nil, fail(http.StatusUnprocessableEntity, "No commit found for SHA: %s", sha)
	}
	var items []any
	for _, pr := range sortedPulls(c.repo) {
		if pr.mergeCommit == sha || s.introduces(c.repo, pr, sha) {
			items = append(items, s.pullJSON(c.repo, pr))
		}
	}
	return http.StatusOK, page(c, items), nil
}

// introduces tells whether sha is one of the pull request's own commits.
func (s *Server) introduces(r *repository, pr *pullRequest, sha string) bool {
	base := ancestors(r, pr.forkPoint)
	head := ancestors(r, pr.headSHA)
	return head[sha] && !base[sha]
}

func ancestors(r *repository, sha string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{sha}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur == "" || seen[cur] || r.commits[cur] == nil {
			continue
		}
		seen[cur] = true
		stack = append(stack, r.commits[cur].Parents...)
	}
	return seen
}

func sortedPulls(r *repository) []*pullRequest {
	out := make([]*pullRequest, 0, len(r.pulls))
	for _, pr := range r.pulls {
		out = append(out, pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number > out[j].number })
	return out
}

func (s *Server) getPull(c *call) (int, any, error) {
	n, _ := strconv.Atoi(c.params["pull_number"])
	pr := c.repo.pulls[n]
	if pr == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	out := s.pullJSON(c.repo, pr)
	out["merged"] = pr.merged
	out["mergeable"] = nil
	out["rebaseable"] = nil
	out["mergeable_state"] = "clean"
	out["merged_by"] = s.userOrNil(pr.mergedBy)
	out["comments"], out["review_comments"], out["commits"], out["additions"], out["deletions"], out["changed_files"] = 0, 0, 1, 1, 1, 1
	out["maintainer_can_modify"] = false
	return http.StatusOK, out, nil
}

func (s *Server) listPulls(c *call) (int, any, error) {
	q := c.req.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var items []any
	for _, pr := range sortedPulls(c.repo) {
		if state != "all" && pr.state != state {
			continue
		}
		if head := q.Get("head"); head != "" && head != c.repo.owner+":"+pr.head {
			continue
		}
		if base := q.Get("base"); base != "" && base != pr.base {
			continue
		}
		items = append(items, s.pullJSON(c.repo, pr))
	}
	return http.StatusOK, page(c, items), nil
}

func (s *Server) createPull(c *call) (int, any, error) {
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	head := strings.TrimPrefix(in.Head, c.repo.owner+":")
	if c.repo.refs["refs/heads/"+head] == "" || c.repo.refs["refs/heads/"+in.Base] == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed")
	}
	for _, pr := range c.repo.pulls {
		if pr.state == "open" && pr.head == head && pr.base == in.Base {
			return 0, nil, fail(http.StatusUnprocessableEntity, "A pull request already exists for %s:%s.", c.repo.owner, head)
		}
	}
	n := s.openPull(c.repo, head, in.Base, in.Title, in.Body, c.login)
	return http.StatusCreated, s.pullJSON(c.repo, c.repo.pulls[n]), nil
}

func (s *Server) pullJSON(r *repository, pr *pullRequest) map[string]any {
	labels := make([]any, 0, len(pr.labels))
	for i, l := range pr.labels {
		labels = append(labels, map[string]any{
			"id": int64(i + 1), "node_id": "LA_" + l, "url": s.apiURL("repos/%s/%s/labels/%s", r.owner, r.name, l),
			// A string, not null: pull-request-simple (the list of a commit's
			// pull requests) does not allow null, pull-request does.
			"name": l, "description": "", "color": "ededed", "default": false,
		})
	}
	ref := func(branch, sha string) map[string]any {
		return map[string]any{"label": r.owner + ":" + branch, "ref": branch, "sha": sha, "user": s.user(r.owner), "repo": s.repoJSON(r)}
	}
	baseSHA := r.refs["refs/heads/"+pr.base]
	var mergeCommit, mergedAt, closedAt any
	if pr.merged {
		mergeCommit, mergedAt, closedAt = pr.mergeCommit, stamp(pr.mergedAt), stamp(pr.mergedAt)
	}
	url := s.apiURL("repos/%s/%s/pulls/%d", r.owner, r.name, pr.number)
	return map[string]any{
		"id": pr.id, "node_id": "PR_" + itoa(pr.id), "number": pr.number, "url": url,
		"html_url": fmt.Sprintf("%s%s/%s/pull/%d", s.htmlRoot(), r.owner, r.name, pr.number),
		"state":    pr.state, "locked": false, "title": pr.title, "body": nullable(pr.body),
		"user": s.user(pr.user), "labels": labels, "milestone": nil, "assignee": nil,
		"created_at": stamp(pr.createdAt), "updated_at": stamp(pr.updatedAt),
		"closed_at": closedAt, "merged_at": mergedAt, "merge_commit_sha": mergeCommit,
		"head": ref(pr.head, pr.headSHA), "base": ref(pr.base, baseSHA),
		"author_association": "MEMBER", "auto_merge": nil, "draft": false,
		"_links": map[string]any{
			"self": map[string]any{"href": url}, "html": map[string]any{"href": url}, "issue": map[string]any{"href": url},
			"comments": map[string]any{"href": url}, "review_comments": map[string]any{"href": url},
			"review_comment": map[string]any{"href": url}, "commits": map[string]any{"href": url}, "statuses": map[string]any{"href": url},
		},
	}
}

func (s *Server) listIssueEvents(c *call) (int, any, error) {
	n, _ := strconv.Atoi(c.params["issue_number"])
	if c.repo.pulls[n] == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	var items []any
	for _, e := range c.repo.events[n] {
		items = append(items, map[string]any{
			"id": e.id, "node_id": "LE_" + itoa(e.id), "url": s.apiURL("repos/%s/%s/issues/events/%d", c.repo.owner, c.repo.name, e.id),
			"actor": s.user(e.actor), "event": e.event, "commit_id": nil, "commit_url": nil,
			"created_at": stamp(e.createdAt), "performed_via_github_app": nil,
			"label": map[string]any{"name": e.label, "color": "ededed"},
		})
	}
	return http.StatusOK, page(c, items), nil
}

func (s *Server) getPermission(c *call) (int, any, error) {
	login := c.params["username"]
	role, ok := c.repo.roles[login]
	if !ok {
		if !s.knownUser(login) {
			return 0, nil, fail(http.StatusNotFound, "Not Found")
		}
		role = "none"
	}
	permission := role
	switch role {
	case RoleMaintain:
		permission = RoleWrite
	case RoleTriage:
		permission = RoleRead
	}
	user := s.user(login)
	user["permissions"] = map[string]any{
		"pull": role != "none", "triage": role != "none" && role != RoleRead, "push": permission == RoleWrite || role == RoleAdmin,
		"maintain": role == RoleMaintain || role == RoleAdmin, "admin": role == RoleAdmin,
	}
	user["role_name"] = role
	return http.StatusOK, map[string]any{"permission": permission, "role_name": role, "user": user}, nil
}

// knownUser tells whether the fake has heard of login (a token, a role, an author).
func (s *Server) knownUser(login string) bool {
	for _, t := range s.tokens {
		if t.login == login {
			return true
		}
	}
	for _, r := range s.repos {
		if _, ok := r.roles[login]; ok {
			return true
		}
		for _, pr := range r.pulls {
			if pr.user == login {
				return true
			}
		}
	}
	return false
}

// page serves one page of a list (per_page and page query parameters) with GitHub's Link
// header.
func page(c *call, items []any) []any {
	q := c.req.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	n, err := strconv.Atoi(q.Get("page"))
	if err != nil || n <= 0 {
		n = 1
	}
	start := min((n-1)*per, len(items))
	end := min(start+per, len(items))
	if end < len(items) {
		next := *c.req.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(n+1))
		nq.Set("per_page", strconv.Itoa(per))
		next.RawQuery = nq.Encode()
		next.Scheme, next.Host = "http", c.req.Host
		c.header.Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", next.String()))
	}
	out := items[start:end]
	if out == nil {
		out = []any{}
	}
	return out
}

// user is a simple-user object.
func (s *Server) user(login string) map[string]any {
	if login == "" {
		login = "ghost"
	}
	kind := "User"
	if strings.HasSuffix(login, "[bot]") {
		kind = "Bot"
	}
	return map[string]any{
		"login": login, "id": int64(len(login)*1000 + int(login[0])), "node_id": "U_" + login, "type": kind,
		"url": s.apiURL("users/%s", login), "html_url": s.htmlRoot() + login, "site_admin": false,
	}
}

func (s *Server) userOrNil(login string) any {
	if login == "" {
		return nil
	}
	return s.user(login)
}

// repoJSON is a repository object.
func (s *Server) repoJSON(r *repository) map[string]any {
	return map[string]any{
		"id": r.id, "node_id": "R_" + itoa(r.id), "name": r.name, "full_name": r.owner + "/" + r.name,
		"owner": s.user(r.owner), "private": false, "default_branch": r.defaultBranch,
		"html_url": s.htmlRoot() + r.owner + "/" + r.name, "url": s.apiURL("repos/%s/%s", r.owner, r.name),
		"license": nil, "description": nil, "homepage": nil, "language": nil, "mirror_url": nil,
	}
}

func (s *Server) apiURL(format string, args ...any) string {
	return s.URL + fmt.Sprintf(format, args...)
}

// htmlRoot is where the fake's web pages would be.
func (s *Server) htmlRoot() string { return s.URL + "web/" }

func nullable(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
