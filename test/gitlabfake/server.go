// Package gitlabfake is an in-memory GitLab for tests: an HTTP server implementing exactly the
// REST v4 operations sluice's GitLab adapter uses, with users and their tokens, groups and
// subgroups, projects, members and their access levels, commits and branches, merge requests,
// their label events and notes, commit statuses, the revert API, failure injection (server errors,
// rate limits with GitLab's RateLimit-* headers and 429 + Retry-After) and webhook deliveries
// authenticated with X-Gitlab-Token.
//
// GitLab itself cannot run on the machines sluice is built and tested on, so this fake stands
// in for it. Two things keep it honest:
//
//   - Every request body is decoded with DisallowUnknownFields into the options type of
//     gitlab.com/gitlab-org/api/client-go that the operation takes, and every query parameter
//     must be one that type declares; every response is built from client-go's types and
//     decoded back into them with DisallowUnknownFields before it is sent. A mismatch is
//     reported to the test through Reporter.
//   - The commit-status state machine is GitLab's (app/models/commit_status.rb and
//     Ci::CreateCommitStatusService): a post updates the context's status that is still pending
//     or running, else starts a new one (created); "pending" enqueues it, "running" enqueues it
//     if it can and runs it, "success", "failed" and "canceled" finish it, and a transition the
//     state machine does not have is answered 400 "Cannot transition status via :enqueue from
//     :pending (Reason(s): Status cannot transition via "enqueue")", as GitLab answers.
//
// Approvals are modelled as GitLab without approval rules has them: a user with the Developer
// role or above approves an open merge request once (with a system note "approved this merge
// request") and may take it back (ApproveMergeRequest, UnapproveMergeRequest).
//
// What it does not model: pipelines other than the external one statuses create, protected
// branches, forks, merge trains, approval rules, GraphQL, and GitLab's finer authorisation (an
// operation needs a fixed access level; see the handlers).
package gitlabfake

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Reporter receives what the fake finds wrong; *testing.T is one.
type Reporter interface {
	// Errorf reports a failure without stopping the test.
	Errorf(format string, args ...any)
}

// Server is the fake GitLab.
type Server struct {
	// URL is the server's root (the client's base URL); the API is under URL + "/api/v4".
	URL string

	http   *httptest.Server
	report Reporter

	mu       sync.Mutex
	clock    func() time.Time
	nextID   int64
	users    map[int64]*user
	tokens   map[string]int64 // token -> user id
	groups   map[string]*group
	projects map[int64]*project
	requests []Request
	limits   limits
	hooks    []*hook
	sent     []Delivery
	pending  []outgoing // deliveries made while serving a request, sent after it
}

// Request is a request the fake received.
type Request struct {
	// Method and Path (escaped, under /api/v4) of the request.
	Method, Path string
	// Route is the operation it matched, e.g. "POST /projects/:id/statuses/:sha" ("" if none).
	Route string
	// Status is the status the fake answered with.
	Status int
}

// New starts a fake GitLab reporting protocol mismatches to r. Close stops it.
func New(r Reporter) *Server {
	s := &Server{
		report:   r,
		clock:    time.Now,
		users:    map[int64]*user{},
		tokens:   map[string]int64{},
		groups:   map[string]*group{},
		projects: map[int64]*project{},
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.http.Close() }

// SetClock makes the fake tell time with now (timestamps, rate-limit windows).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests matched route (e.g. "POST /projects/:id/statuses/:sha"),
// whatever they were answered.
func (s *Server) Count(route string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// apiError is an error answer: GitLab's {"message": ...} body, and for the revert API its
// error_code.
type apiError struct {
	status    int
	message   string
	errorCode string
	// grape marks a parameter validation error, which GitLab's API framework sends as
	// {"error": ...} rather than {"message": ...}.
	grape bool
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func fail(status int, format string, args ...any) error {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

// invalidParam is GitLab's 400 for a missing or invalid parameter, e.g. "state is missing".
func invalidParam(message string) error {
	return &apiError{status: 400, message: message, grape: true}
}

// notFound is GitLab's 404 body for a missing object, e.g. "404 Project Not Found".
func notFound(what string) error {
	return &apiError{status: http.StatusNotFound, message: "404 " + what + " Not Found"}
}

// call is one request being served.
type call struct {
	req    *http.Request
	params map[string]string // the route's parameters, unescaped
	query  url.Values
	body   []byte
	user   *user
	header http.Header // the response's headers
}

// reply is a handler's answer: a status and a value of a client-go type (nil for no body).
type reply struct {
	status int
	value  any
}

// handler serves one route, with s.mu held.
type handler func(c *call) (reply, error)

// route is one operation: its method, its path pattern (":name" segments are parameters; a
// parameter matches one escaped segment, so a project path must be URL-encoded as GitLab wants),
// and the client-go options type its query or body must decode into.
type route struct {
	method  string
	pattern string
	options any // a pointer to the client-go options struct; nil for none
	serve   handler
}

// name is the route's name as Request.Route reports it.
func (r route) name() string { return r.method + " " + r.pattern }

func (r route) match(method string, segments []string) (map[string]string, bool) {
	if method != r.method {
		return nil, false
	}
	want := strings.Split(strings.Trim(r.pattern, "/"), "/")
	if len(want) != len(segments) {
		return nil, false
	}
	params := map[string]string{}
	for i, w := range want {
		if strings.HasPrefix(w, ":") {
			v, err := url.PathUnescape(segments[i])
			if err != nil || v == "" {
				return nil, false
			}
			params[w[1:]] = v
			continue
		}
		if w != segments[i] {
			return nil, false
		}
	}
	return params, true
}

const apiPrefix = "/api/v4/"

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	escaped := req.URL.EscapedPath()
	rec := Request{Method: req.Method, Path: escaped}
	header := http.Header{}
	contentType := "application/json"
	answer := func(status int, payload []byte) {
		rec.Status = status
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		queued := s.takeQueued()
		s.mu.Unlock()
		for k, v := range header {
			w.Header()[k] = v
		}
		if payload != nil {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(payload)
		if len(queued) > 0 {
			// The client has its answer before the webhooks it caused are delivered, as with
			// GitLab's asynchronous hooks.
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			s.deliver(queued)
		}
	}
	if !strings.HasPrefix(escaped, apiPrefix) {
		answer(http.StatusNotFound, errorBody(&apiError{status: http.StatusNotFound, message: "404 Not Found"}))
		return
	}
	segments := strings.Split(strings.Trim(strings.TrimPrefix(escaped, apiPrefix), "/"), "/")
	var (
		rt     route
		params map[string]string
		found  bool
	)
	for _, r := range s.routes() {
		if params, found = r.match(req.Method, segments); found {
			rt = r
			break
		}
	}
	if !found {
		s.report.Errorf("gitlabfake: %s %s is not an operation the fake implements", req.Method, escaped)
		answer(http.StatusNotFound, errorBody(&apiError{status: http.StatusNotFound, message: "404 Not Found"}))
		return
	}
	rec.Route = rt.name()
	c := &call{req: req, params: params, query: req.URL.Query(), body: body, header: header}
	if err := s.checkRequest(rt, c); err != nil {
		s.report.Errorf("gitlabfake: %s does not match client-go's %T: %v", rt.name(), rt.options, err)
		answer(http.StatusBadRequest, errorBody(&apiError{status: http.StatusBadRequest, message: err.Error()}))
		return
	}

	s.mu.Lock()
	if r := s.refuse(rt.name(), header); r != nil {
		s.mu.Unlock()
		if r.text {
			contentType = "text/plain"
		}
		answer(r.status, r.body)
		return
	}
	u, ae := s.authenticate(req)
	if ae != nil {
		s.mu.Unlock()
		answer(ae.status, errorBody(ae))
		return
	}
	c.user = u
	rep, err := rt.serve(c)
	s.mu.Unlock()
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = &apiError{status: http.StatusInternalServerError, message: "500 Internal Server Error: " + err.Error()}
		}
		answer(ae.status, errorBody(ae))
		return
	}
	if rep.value == nil {
		answer(rep.status, nil)
		return
	}
	payload, err := s.encode(rt, rep.value)
	if err != nil {
		s.report.Errorf("gitlabfake: the response of %s does not decode into client-go's %T: %v", rt.name(), rep.value, err)
	}
	answer(rep.status, payload)
}

// authenticate finds the user of the request's PRIVATE-TOKEN (or Bearer token), as GitLab
// answers 401 "401 Unauthorized" without a valid one.
func (s *Server) authenticate(req *http.Request) (*user, *apiError) {
	token := req.Header.Get("Private-Token")
	if token == "" {
		token = strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	}
	id, ok := s.tokens[token]
	if !ok || token == "" {
		return nil, &apiError{status: http.StatusUnauthorized, message: "401 Unauthorized"}
	}
	u := s.users[id]
	if u.state != "active" {
		return nil, &apiError{status: http.StatusForbidden, message: "403 Forbidden - Your account has been blocked."}
	}
	return u, nil
}

// errorBody is GitLab's error body: {"message": "..."}, with "error_code" where the revert API
// sends one.
func errorBody(e *apiError) []byte {
	var b bytes.Buffer
	if e.grape {
		b.WriteString(`{"error":`)
		b.Write(quote(e.message))
		b.WriteString("}")
		return b.Bytes()
	}
	b.WriteString(`{"message":`)
	b.Write(quote(e.message))
	if e.errorCode != "" {
		b.WriteString(`,"error_code":`)
		b.Write(quote(e.errorCode))
	}
	b.WriteString("}")
	return b.Bytes()
}

// now is the fake's time, in UTC and to the millisecond as GitLab reports it.
func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Millisecond) }

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}
