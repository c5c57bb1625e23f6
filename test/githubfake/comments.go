package githubfake

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// surfaceHandlers are the handlers of the pull request's comments, check runs and the
// identity calls (who a token is, which App a JWT is).
func (s *Server) surfaceHandlers() map[string]handler {
	return map[string]handler{
		"apps/get-authenticated":  s.getAuthenticatedApp,
		"checks/create":           s.createCheckRun,
		"checks/list-for-ref":     s.listCheckRunsForRef,
		"checks/update":           s.updateCheckRun,
		"issues/create-comment":   s.createComment,
		"issues/list-comments":    s.listComments,
		"issues/update-comment":   s.updateComment,
		"users/get-authenticated": s.getAuthenticatedUser,
	}
}

// issueComment is a comment on an issue or pull request.
type issueComment struct {
	id        int64
	number    int
	author    string
	body      string
	app       int64 // the App whose installation wrote it; 0: a user
	createdAt time.Time
	updatedAt time.Time
	edits     int
}

// IssueComment is a comment on a pull request as the fake stores it.
type IssueComment struct {
	// ID is the comment's id.
	ID int64
	// Author is the login of who wrote it.
	Author string
	// Body is its text.
	Body string
	// Edits counts how often it was edited.
	Edits int
}

// Comments returns the comments of pull request number, oldest first.
func (s *Server) Comments(fullName string, number int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []IssueComment
	for _, c := range s.mustRepo(fullName).comments[number] {
		out = append(out, IssueComment{ID: c.id, Author: c.author, Body: c.body, Edits: c.edits})
	}
	return out
}

// AddComment has login comment body on pull request number (as a person does on GitHub's web
// page) and returns the comment's id.
func (s *Server) AddComment(fullName string, number int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	if r.pulls[number] == nil {
		panic(fmt.Sprintf("githubfake: no pull request #%d", number))
	}
	return s.addComment(r, number, login, body, 0).id
}

func (s *Server) addComment(r *repository, number int, login, body string, app int64) *issueComment {
	if r.comments == nil {
		r.comments = map[int][]*issueComment{}
	}
	s.nextID++
	now := s.clock()
	c := &issueComment{id: s.nextID, number: number, author: login, body: body, app: app, createdAt: now, updatedAt: now}
	r.comments[number] = append(r.comments[number], c)
	return c
}

// commentJSON is an issue-comment object.
func (s *Server) commentJSON(r *repository, c *issueComment) map[string]any {
	var via any
	if c.app != 0 {
		via = s.appJSON(s.appByID(c.app))
	}
	return map[string]any{
		"id": c.id, "node_id": "IC_" + itoa(c.id), "url": s.apiURL("repos/%s/%s/issues/comments/%d", r.owner, r.name, c.id),
		"html_url":  fmt.Sprintf("%s%s/%s/pull/%d#issuecomment-%d", s.htmlRoot(), r.owner, r.name, c.number, c.id),
		"issue_url": s.apiURL("repos/%s/%s/issues/%d", r.owner, r.name, c.number),
		"body":      c.body, "user": s.user(c.author), "created_at": stamp(c.createdAt), "updated_at": stamp(c.updatedAt),
		"author_association": "MEMBER", "performed_via_github_app": via,
	}
}

// commentTarget returns the pull request number of an issue-comments call.
func (s *Server) commentTarget(c *call) (int, error) {
	n, err := strconv.Atoi(c.params["issue_number"])
	if err != nil || c.repo.pulls[n] == nil {
		return 0, fail(http.StatusNotFound, "Not Found")
	}
	return n, nil
}

// listComments serves GET /repos/{owner}/{repo}/issues/{issue_number}/comments.
func (s *Server) listComments(c *call) (int, any, error) {
	n, err := s.commentTarget(c)
	if err != nil {
		return 0, nil, err
	}
	var items []any
	for _, cm := range c.repo.comments[n] {
		items = append(items, s.commentJSON(c.repo, cm))
	}
	return http.StatusOK, page(c, items), nil
}

// createComment serves POST /repos/{owner}/{repo}/issues/{issue_number}/comments as the
// token's user (an App's bot for an installation token).
func (s *Server) createComment(c *call) (int, any, error) {
	var in struct {
		Body string `json:"body"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	n, err := s.commentTarget(c)
	if err != nil {
		return 0, nil, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Validation Failed: body cannot be blank")
	}
	return http.StatusCreated, s.commentJSON(c.repo, s.addComment(c.repo, n, c.login, in.Body, c.token.app)), nil
}

// updateComment serves PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}: its author,
// an App's installation and anyone who may push may edit a comment, as on GitHub.
func (s *Server) updateComment(c *call) (int, any, error) {
	var in struct {
		Body string `json:"body"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	id, _ := strconv.ParseInt(c.params["comment_id"], 10, 64)
	var found *issueComment
	for _, list := range c.repo.comments {
		for _, cm := range list {
			if cm.id == id {
				found = cm
			}
		}
	}
	if found == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	role := c.repo.roles[c.login]
	if !strings.EqualFold(found.author, c.login) && c.token.app == 0 && role != RoleWrite && role != RoleMaintain && role != RoleAdmin {
		return 0, nil, fail(http.StatusForbidden, "Must have push access to edit this comment")
	}
	found.body, found.updatedAt = in.Body, s.clock()
	found.edits++
	return http.StatusOK, s.commentJSON(c.repo, found), nil
}

// getAuthenticatedUser serves GET /user: the token's user. An installation token is not a
// user: GitHub answers 403.
func (s *Server) getAuthenticatedUser(c *call) (int, any, error) {
	if c.token.app != 0 {
		return 0, nil, fail(http.StatusForbidden, "Resource not accessible by integration")
	}
	u := s.user(c.login)
	u["user_view_type"] = "private"
	return http.StatusOK, u, nil
}

// getAuthenticatedApp serves GET /app: the App of the JWT.
func (s *Server) getAuthenticatedApp(c *call) (int, any, error) {
	return http.StatusOK, s.appJSON(c.app), nil
}

// appByID returns the App of id (nil if unknown).
func (s *Server) appByID(id int64) *app {
	for _, a := range s.apps {
		if a.id == id {
			return a
		}
	}
	return nil
}

// appJSON is an integration object.
func (s *Server) appJSON(a *app) map[string]any {
	if a == nil {
		return nil
	}
	slug := s.appSlugs[a.installationID]
	return map[string]any{
		"id": a.id, "slug": slug, "node_id": "A_" + itoa(a.id), "client_id": a.clientID, "name": slug,
		"owner": s.user("app-owner"), "description": nil, "external_url": s.htmlRoot() + "apps/" + slug,
		"html_url": s.htmlRoot() + "apps/" + slug, "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
		"permissions": map[string]any{"checks": "write", "pull_requests": "write", "statuses": "write", "contents": "write", "metadata": "read"},
		"events":      []any{"check_run", "pull_request", "push"},
	}
}

// DeleteComment deletes a comment (as a person does on GitHub's web page).
func (s *Server) DeleteComment(fullName string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	for n, list := range r.comments {
		for i, c := range list {
			if c.id == id {
				r.comments[n] = append(list[:i:i], list[i+1:]...)
				return
			}
		}
	}
}
