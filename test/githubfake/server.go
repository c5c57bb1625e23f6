// Package githubfake is an in-memory GitHub for tests: an HTTP server implementing exactly the
// REST operations sluice's GitHub adapter uses, with repositories, commits, pull requests,
// labels and their history, commit statuses, collaborators, the Git Data API and GitHub App
// installation tokens, plus failure injection (server errors, primary and secondary rate
// limits) and signed webhook deliveries.
//
// Every request it receives and every response it sends is validated against GitHub's published
// OpenAPI description (trimmed to these operations, see testdata/README.md); a mismatch is
// reported to the test through Reporter. Responses are built from the fake's state laid over
// the smallest value the schema allows (every required field present), so a client reads real
// values where it looks and schema-conforming filler elsewhere.
package githubfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
)

// Reporter receives what the fake finds wrong; *testing.T is one.
type Reporter interface {
	// Errorf reports a failure without stopping the test.
	Errorf(format string, args ...any)
}

// hourlyBudget is the primary rate limit the fake announces.
const hourlyBudget = 5000

// Server is the fake GitHub.
type Server struct {
	// URL is the REST API's root, ending with a slash (the client's base URL).
	URL string

	http   *httptest.Server
	spec   *spec
	report Reporter

	mu       sync.Mutex
	clock    func() time.Time
	repos    map[string]*repository
	tokens   map[string]tokenInfo
	apps     map[int64]*app
	appSlugs map[int64]string
	nextID   int64
	requests []Request
	failures []*failure
	// slow holds, by operation, how long its requests wait (Slow).
	slow      map[string]time.Duration
	primary   time.Time // primary limit exhausted until
	secondary time.Time // secondary limit until
	remaining int
	corrupt   func(operation string, body []byte) []byte
	hooks     webhooks
	repoHooks map[string][]repoHook // repository (lower case) -> its webhooks
	delivered []HookDelivery
	teams     map[string]map[string]string // "org/slug" (lower case) -> login (lower case) -> membership state
	// conversations are the comments and reviews of pull requests (conversation.go).
	conversations *conversations
}

// tokenInfo is an accepted bearer token.
type tokenInfo struct {
	login   string
	expires time.Time // zero: never
	repos   []string  // names of the repositories it may access; nil: all
	app     int64     // the App whose installation token it is; 0: a user's token
}

// Request is a request the fake received.
type Request struct {
	// Method and Path of the request.
	Method, Path string
	// Operation is the operationId it matched ("" if none).
	Operation string
	// Status is the status the fake answered with.
	Status int
	// IfNoneMatch is the request's If-None-Match header.
	IfNoneMatch string
}

// New starts a fake GitHub reporting validation failures to r. Close stops it.
func New(r Reporter) (*Server, error) {
	s := &Server{
		report:    r,
		clock:     time.Now,
		repos:     map[string]*repository{},
		tokens:    map[string]tokenInfo{},
		apps:      map[int64]*app{},
		appSlugs:  map[int64]string{},
		remaining: hourlyBudget,
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL + "/"
	sp, err := loadSpec(s.http.URL)
	if err != nil {
		s.http.Close()
		return nil, err
	}
	s.spec = sp
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.http.Close() }

// SetClock makes the fake tell time with now (token expiry, rate-limit windows, timestamps).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// AddToken accepts token as the credential of user login.
func (s *Server) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = tokenInfo{login: login}
}

// CorruptResponses lets f rewrite every response body before it is validated and sent (to
// prove that response validation catches a malformed body). nil restores normal responses.
func (s *Server) CorruptResponses(f func(operation string, body []byte) []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.corrupt = f
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests matched operation.
func (s *Server) Count(operation string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Operation == operation {
			n++
		}
	}
	return n
}

// handler serves one operation. It returns the status and the values of the response body
// (laid over the schema's skeleton), or an apiError.
type handler func(c *call) (int, any, error)

// call is one request being served.
type call struct {
	req    *http.Request
	params map[string]string
	body   []byte
	login  string
	token  tokenInfo
	repo   *repository
	// app is the App an /app call authenticated as (its JWT).
	app    *app
	header http.Header
	// after runs once the response is sent, outside the fake's lock: the
	// webhook deliveries the call causes, as GitHub sends them after
	// answering.
	after []func(context.Context)
}

// apiError is an error answer.
type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func fail(status int, format string, args ...any) error {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	route, params, err := s.spec.route(req)
	if err != nil {
		s.report.Errorf("githubfake: %s %s is not an operation of the trimmed GitHub description: %v", req.Method, req.URL.Path, err)
		s.record(req, "", http.StatusNotFound)
		s.writeError(w, nil, "", http.StatusNotFound, "Not Found")
		return
	}
	op := route.Operation.OperationID
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err := s.spec.validateRequest(ctx, req, route, params); err != nil {
		s.report.Errorf("githubfake: request %s %s (%s) does not match GitHub's description: %v", req.Method, req.URL.Path, op, err)
		s.record(req, op, http.StatusUnprocessableEntity)
		s.writeError(w, nil, op, http.StatusUnprocessableEntity, "Validation Failed: "+err.Error())
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))

	if d := s.slowness(op); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return
		}
	}
	header := http.Header{}
	if status, retry, message, limited := s.limited(op, header); limited {
		if retry != "" {
			header.Set("Retry-After", retry)
		}
		s.record(req, op, status)
		s.writeError(w, header, op, status, message)
		return
	}
	c := &call{req: req, params: params, body: body, header: header}
	h := s.handlers()[op]
	if h == nil {
		// Unreachable while TestHandlers_coverEveryDescribedOperation holds:
		// every described operation has a handler.
		s.report.Errorf("githubfake: operation %s is described but has no handler: add one to handlers()", op)
		s.record(req, op, http.StatusNotImplemented)
		s.writeError(w, header, op, http.StatusNotImplemented, "githubfake has no handler for "+op)
		return
	}
	status, values, err := s.dispatch(c, op, h)
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = &apiError{status: http.StatusInternalServerError, message: err.Error()}
		}
		s.record(req, op, ae.status)
		s.writeResponse(w, req, route, params, ae.status, header, errorBody(ae.message), op)
		return
	}
	payload := fill(s.spec.responseSchema(route, status), values)
	out, err := json.Marshal(payload)
	if err != nil {
		s.report.Errorf("githubfake: encoding the response of %s: %v", op, err)
		return
	}
	if req.Method == http.MethodGet && status == http.StatusOK {
		etag := etagOf(out)
		header.Set("ETag", etag)
		if match := req.Header.Get("If-None-Match"); match != "" && match == etag {
			s.refund()
			s.record(req, op, http.StatusNotModified)
			copyHeader(w.Header(), header)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	s.record(req, op, status)
	s.writeResponse(w, req, route, params, status, header, out, op)
	for _, f := range c.after {
		f(context.WithoutCancel(ctx))
	}
}

// dispatch authenticates the call, finds its repository and runs the handler.
func (s *Server) dispatch(c *call, op string, h handler) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(op, "apps/") {
		if err := s.authenticateApp(c); err != nil {
			return 0, nil, err
		}
	} else if err := s.authenticate(c); err != nil {
		return 0, nil, err
	}
	if owner, ok := c.params["owner"]; ok {
		r, err := s.repo(owner, c.params["repo"])
		if err != nil || !c.token.allows(r.name) {
			return 0, nil, fail(http.StatusNotFound, "Not Found")
		}
		c.repo = r
	}
	return h(c)
}

// authenticate checks the bearer token.
func (s *Server) authenticate(c *call) error {
	auth := c.req.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		token, ok = strings.CutPrefix(auth, "token ")
	}
	info, known := s.tokens[token]
	if !ok || !known {
		return fail(http.StatusUnauthorized, "Bad credentials")
	}
	if !info.expires.IsZero() && !s.clock().Before(info.expires) {
		return fail(http.StatusUnauthorized, "Bad credentials")
	}
	c.login, c.token = info.login, info
	return nil
}

// allows tells whether the token may access the repository called name.
func (t tokenInfo) allows(name string) bool {
	if t.repos == nil {
		return true
	}
	for _, r := range t.repos {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return false
}

// writeResponse validates and sends a response.
func (s *Server) writeResponse(w http.ResponseWriter, req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte, op string) {
	s.mu.Lock()
	corrupt := s.corrupt
	s.mu.Unlock()
	if corrupt != nil {
		body = corrupt(op, body)
	}
	header.Set("Content-Type", "application/json; charset=utf-8")
	if err := s.spec.validateResponse(req.Context(), req, route, params, status, header, body); err != nil {
		if status < http.StatusBadRequest || s.spec.validateError(body) != nil {
			s.report.Errorf("githubfake: response %d to %s %s (%s) does not match GitHub's description: %v", status, req.Method, req.URL.Path, op, err)
		}
	}
	copyHeader(w.Header(), header)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError sends an error the operation may not document (injected failures, unknown
// routes); its body is checked against GitHub's basic-error schema.
func (s *Server) writeError(w http.ResponseWriter, header http.Header, op string, status int, message string) {
	body := errorBody(message)
	s.mu.Lock()
	corrupt := s.corrupt
	s.mu.Unlock()
	if corrupt != nil {
		body = corrupt(op, body)
	}
	if err := s.spec.validateError(body); err != nil {
		s.report.Errorf("githubfake: error response of %s does not match GitHub's basic-error: %v", op, err)
	}
	copyHeader(w.Header(), header)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func errorBody(message string) []byte {
	out, _ := json.Marshal(map[string]any{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	})
	return out
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

func (s *Server) record(req *http.Request, op string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: req.Method, Path: req.URL.Path, Operation: op, Status: status, IfNoneMatch: req.Header.Get("If-None-Match"),
	})
}

// refund gives back the budget of a request answered 304: GitHub does not count those.
func (s *Server) refund() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remaining < hourlyBudget {
		s.remaining++
	}
}

// itoa formats an int64.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }
