package githubfake

import (
	"context"
	"fmt"
	"strings"
)

// DeliverComment sends an issue_comment delivery of action "created" or "edited" for comment id
// (made with AddComment) on pull request number, sent by its author, to url signed with secret.
// The payload is validated against @octokit/webhooks-schemas like every other delivery.
func (s *Server) DeliverComment(ctx context.Context, url string, secret []byte, fullName string, number int, id int64, action string) (Delivery, error) {
	s.mu.Lock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	var cm *issueComment
	for _, c := range r.comments[number] {
		if c.id == id {
			cm = c
		}
	}
	if pr == nil || cm == nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("no comment %d on pull request #%d", id, number)
	}
	values := map[string]any{"action": action}
	switch action {
	case "created":
	case "edited":
		values["changes"] = map[string]any{"body": map[string]any{"from": ""}}
	default:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("issue_comment action %q: the fake sends created and edited", action)
	}
	issueURL := s.apiURL("repos/%s/%s/issues/%d", r.owner, r.name, number)
	values["issue"] = map[string]any{
		"id": pr.id, "node_id": "I_" + itoa(pr.id), "number": number, "url": issueURL, "repository_url": s.apiURL("repos/%s/%s", r.owner, r.name),
		"labels_url": issueURL + "/labels", "comments_url": issueURL + "/comments", "events_url": issueURL + "/events",
		"html_url": fmt.Sprintf("%s%s/%s/pull/%d", s.htmlRoot(), r.owner, r.name, number), "title": pr.title, "body": nullable(pr.body),
		"user": s.user(pr.user), "state": pr.state, "locked": false, "assignee": nil, "assignees": []any{}, "labels": []any{}, "milestone": nil,
		"comments": 1, "created_at": stamp(pr.createdAt), "updated_at": stamp(pr.updatedAt), "closed_at": nil, "author_association": "MEMBER",
		"active_lock_reason": nil, "performed_via_github_app": nil,
		"pull_request": map[string]any{"url": s.apiURL("repos/%s/%s/pulls/%d", r.owner, r.name, number),
			"html_url":  fmt.Sprintf("%s%s/%s/pull/%d", s.htmlRoot(), r.owner, r.name, number),
			"diff_url":  fmt.Sprintf("%s%s/%s/pull/%d.diff", s.htmlRoot(), r.owner, r.name, number),
			"patch_url": fmt.Sprintf("%s%s/%s/pull/%d.patch", s.htmlRoot(), r.owner, r.name, number)},
		"reactions": reactions(issueURL),
	}
	if pr.merged {
		values["issue"].(map[string]any)["closed_at"] = stamp(pr.mergedAt)
	}
	commentURL := s.apiURL("repos/%s/%s/issues/comments/%d", r.owner, r.name, cm.id)
	values["comment"] = map[string]any{
		"id": cm.id, "node_id": "IC_" + itoa(cm.id), "url": commentURL, "issue_url": issueURL,
		"html_url": fmt.Sprintf("%s%s/%s/pull/%d#issuecomment-%d", s.htmlRoot(), r.owner, r.name, number, cm.id),
		"body":     cm.body, "user": s.user(cm.author), "created_at": stamp(cm.createdAt), "updated_at": stamp(cm.updatedAt),
		"author_association": s.association(r, cm.author), "performed_via_github_app": nil, "reactions": reactions(commentURL),
	}
	values["repository"], values["sender"] = s.repoJSON(r), s.user(cm.author)
	s.mu.Unlock()
	body, err := s.hooks.build("issue_comment$"+action, values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "issue_comment", body)
}

// DeliverReview sends a pull_request_review delivery of action "submitted" or "dismissed" for
// review id (made with Review, and for "dismissed" dismissed with DismissReview) of pull request
// number, sent by sender, to url signed with secret.
func (s *Server) DeliverReview(ctx context.Context, url string, secret []byte, fullName string, number int, id int64, action, sender string) (Delivery, error) {
	s.mu.Lock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	var rv *review
	for _, v := range s.conv().reviews[strings.ToLower(fullName)][number] {
		if v.id == id {
			rv = v
		}
	}
	if pr == nil || rv == nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("no review %d of pull request #%d", id, number)
	}
	state := strings.ToLower(rv.state)
	switch {
	case action == "submitted" && rv.state != ReviewDismissed:
	case action == "dismissed" && rv.state == ReviewDismissed:
	default:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("pull_request_review action %q for a review in state %s", action, rv.state)
	}
	pullURL := s.apiURL("repos/%s/%s/pulls/%d", r.owner, r.name, number)
	html := fmt.Sprintf("%s%s/%s/pull/%d#pullrequestreview-%d", s.htmlRoot(), r.owner, r.name, number, rv.id)
	pull := s.pullJSON(r, pr)
	pull["requested_reviewers"], pull["requested_teams"], pull["assignees"] = []any{}, []any{}, []any{}
	values := map[string]any{
		"action": action,
		"review": map[string]any{
			"id": rv.id, "node_id": "PRR_" + itoa(rv.id), "user": s.user(rv.user), "body": nullable(rv.body), "state": state,
			"commit_id": rv.commit, "html_url": html, "pull_request_url": pullURL, "submitted_at": stamp(rv.submitted),
			"author_association": s.association(r, rv.user),
			"_links":             map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": pullURL}},
		},
		"pull_request": pull,
		"repository":   s.repoJSON(r),
		"sender":       s.user(sender),
	}
	s.mu.Unlock()
	body, err := s.hooks.build("pull_request_review$"+action, values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "pull_request_review", body)
}

// reactions is the empty reaction rollup GitHub attaches to issues and comments.
func reactions(url string) map[string]any {
	return map[string]any{"url": url + "/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "confused": 0, "heart": 0,
		"hooray": 0, "eyes": 0, "rocket": 0}
}
