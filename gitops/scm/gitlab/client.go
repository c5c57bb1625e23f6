// Package gitlab implements sluice's SCM capabilities (gitops/scm) for GitLab, gitlab.com and
// self-managed, with gitlab.com/gitlab-org/api/client-go.
//
// A Client is bound to one project and authenticates with an access token (personal, group or
// project). It refuses to send anything while GitLab has asked to wait (a 429 with Retry-After,
// or a response whose RateLimit-Remaining is 0, until RateLimit-Reset) and says until when, as a
// scm.RateLimitError; retries server errors of requests that are safe to repeat with exponential
// back-off and jitter; and posts a commit status only when it changes, walking GitLab's
// commit-status state machine (see SetStatus).
//
// client-go's own retries and its client-side rate limiter are off: both would block a
// reconcile while it waits, where sluice wants to be told when to come back.
//
// How sluice's notions map onto GitLab's:
//
//   - a pull request is a merge request, numbered by its iid;
//   - a label's history is the merge request's resource label events;
//   - a user's permission is their effective access level on the project (direct, inherited
//     from its groups, or through a group it is shared with): see permissionOf;
//   - a team is a group or subgroup: TeamMember(ctx, "acme", "platform/releasers", user) asks
//     whether user is a member of the group acme/platform/releasers, as GitLab counts members
//     (direct, inherited from an ancestor group, or through a group shared with it);
//   - a revert pull request is a branch from the base, GitLab's revert API applied to it, and a
//     merge request of it.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Defaults of Options.
const (
	// DefaultMaxRetries is how often a server error is retried.
	DefaultMaxRetries = 3
	// DefaultRetryBaseDelay is the first back-off after a server error; it doubles each time.
	DefaultRetryBaseDelay = 500 * time.Millisecond
	// DefaultRetryMaxDelay caps the back-off.
	DefaultRetryMaxDelay = 10 * time.Second
	// DefaultStatusCacheSize is how many (commit, name) statuses are remembered as GitLab shows
	// them.
	DefaultStatusCacheSize = 4096
	// DefaultCommentCacheSize is how many (merge request, key) notes are remembered as posted.
	DefaultCommentCacheSize = 1024
	// DefaultRequestTimeout bounds one HTTP request when Options.HTTPClient is not set.
	DefaultRequestTimeout = 30 * time.Second
)

// Options configure a Client.
type Options struct {
	// Project is the project's path with its namespace, e.g. "acme/app" or
	// "acme/platform/app". Required.
	Project string
	// BaseURL is the server's root URL, e.g. "https://gitlab.com" or
	// "https://gitlab.example.com/gitlab" (the API is under "api/v4"). Required.
	BaseURL string
	// Token is an access token with the api scope, of a user (or project or group bot) with the
	// Developer role on the project (Reporter reads, but cannot post statuses or propose
	// reverts). Required.
	Token string
	// HTTPClient sends the requests (its Transport is wrapped); defaults to one with
	// DefaultRequestTimeout.
	HTTPClient *http.Client
	// UserAgent names the client to the server; defaults to "sluice".
	UserAgent string
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
	// MaxRetries, RetryBaseDelay and RetryMaxDelay shape the retries of server errors; zero
	// values take the defaults, a negative MaxRetries disables retries.
	MaxRetries     int
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Observer is told about every request sent to the server, retries included; nil tells
	// nobody.
	Observer scm.Observer
	// StatusCacheSize bounds the statuses remembered; zero takes the default.
	StatusCacheSize int
}

// Client implements the scm capabilities for one GitLab project.
type Client struct {
	project string
	api     *gl.Client
	now     func() time.Time

	statusMu sync.Mutex
	statuses *statusBook

	infoMu sync.Mutex
	info   *gl.Project

	usersMu sync.Mutex
	userIDs map[string]int64  // lower-case username -> id
	emails  map[string]string // lower-case e-mail -> username ("" for none), see userOfEmail

	// comments keeps sluice's notes on merge requests.
	comments *scm.StickyComments
}

// The capabilities a Client implements.
var (
	_ scm.CommitStatusWriter = (*Client)(nil)
	_ scm.PullRequestReader  = (*Client)(nil)
	_ scm.PermissionReader   = (*Client)(nil)
	_ scm.TeamReader         = (*Client)(nil)
	_ scm.RevertProposer     = (*Client)(nil)
)

// maxCachedUsers bounds the username-to-id cache; it is emptied when full.
const maxCachedUsers = 1024

// New builds a Client from opts. It sends nothing.
func New(opts Options) (*Client, error) {
	if err := checkProject(opts.Project); err != nil {
		return nil, err
	}
	if opts.Token == "" {
		return nil, errors.New("gitlab: token is required")
	}
	base, err := baseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	opts = withDefaults(opts)
	httpClient := opts.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultRequestTimeout}
	}
	next := httpClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if opts.Observer != nil {
		next = &observeTransport{next: next, observer: opts.Observer}
	}
	var rt http.RoundTripper = &gateTransport{next: next, gate: &gate{}, now: opts.Now}
	rt = &retryTransport{next: rt, maxRetries: max(opts.MaxRetries, 0), baseDelay: opts.RetryBaseDelay, maxDelay: opts.RetryMaxDelay}
	api, err := gl.NewClient(opts.Token,
		gl.WithBaseURL(base+"/api/v4"),
		gl.WithHTTPClient(&http.Client{Transport: rt, Timeout: httpClient.Timeout, CheckRedirect: httpClient.CheckRedirect}),
		gl.WithoutRetries(),
		gl.WithCustomLimiter(noWait{}),
		gl.WithUserAgent(opts.UserAgent),
	)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	return &Client{
		project:  opts.Project,
		api:      api,
		now:      opts.Now,
		statuses: newStatusBook(opts.StatusCacheSize),
		userIDs:  map[string]int64{},
		comments: scm.NewStickyComments(DefaultCommentCacheSize),
	}, nil
}

func withDefaults(opts Options) Options {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "sluice"
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.RetryBaseDelay <= 0 {
		opts.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if opts.RetryMaxDelay <= 0 {
		opts.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if opts.StatusCacheSize <= 0 {
		opts.StatusCacheSize = DefaultStatusCacheSize
	}
	return opts
}

// noWait is client-go's rate limiter turned off: the gate refuses instead of waiting.
type noWait struct{}

// Wait implements gl.RateLimiter.
func (noWait) Wait(ctx context.Context) error { return ctx.Err() }

// checkProject checks a project path: a namespace (one or more groups, or a user) and a name.
func checkProject(path string) error {
	if path == "" {
		return errors.New("gitlab: project is required")
	}
	parts := strings.Split(path, "/")
	if len(parts) < 2 {
		return fmt.Errorf("gitlab: project %q is not namespace/name", path)
	}
	for _, p := range parts {
		if !validSegment(p) {
			return fmt.Errorf("gitlab: project %q is not a project path", path)
		}
	}
	return nil
}

// validSegment tells whether s can be one segment of a GitLab namespace or project path.
func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "?#%\\ \t\r\n")
}

// baseURL checks the server's root URL and returns it without a trailing slash.
func baseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("gitlab: base URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("gitlab: base URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("gitlab: base URL %q is not an http(s) URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("gitlab: base URL %q has a query or fragment", raw)
	}
	path := strings.TrimSuffix(u.Path, "/")
	if strings.HasSuffix(path, "/api/v4") {
		return "", fmt.Errorf("gitlab: base URL %q must be the server's root, without /api/v4", raw)
	}
	u.Path = path
	return strings.TrimSuffix(u.String(), "/"), nil
}

// projectInfo reads the project once (its id, web URL and default branch) and remembers it.
func (c *Client) projectInfo(ctx context.Context) (*gl.Project, error) {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	if c.info != nil {
		return c.info, nil
	}
	p, resp, err := c.api.Projects.GetProject(c.project, nil, gl.WithContext(ctx))
	if err != nil {
		return nil, mapError(err, resp, "project "+c.project)
	}
	c.info = p
	return p, nil
}

// userID resolves a username to GitLab's numeric id (GET /users?username=), remembering it. A
// username GitLab does not know is a scm.NotFoundError.
func (c *Client) userID(ctx context.Context, username string) (int64, error) {
	key := strings.ToLower(username)
	c.usersMu.Lock()
	id, ok := c.userIDs[key]
	c.usersMu.Unlock()
	if ok {
		return id, nil
	}
	if !validSegment(username) || strings.Contains(username, "/") {
		return 0, &scm.NotFoundError{What: "user " + username, Message: "not a GitLab username"}
	}
	users, resp, err := c.api.Users.ListUsers(&gl.ListUsersOptions{Username: gl.Ptr(username)}, gl.WithContext(ctx))
	if err != nil {
		return 0, mapError(err, resp, "user "+username)
	}
	for _, u := range users {
		if !strings.EqualFold(u.Username, username) {
			continue
		}
		c.usersMu.Lock()
		if len(c.userIDs) >= maxCachedUsers {
			c.userIDs = map[string]int64{}
		}
		c.userIDs[key] = u.ID
		c.usersMu.Unlock()
		return u.ID, nil
	}
	return 0, &scm.NotFoundError{What: "user " + username}
}

// perPage sets the page size of a listing whose client-go method takes no list options.
func perPage(n int) gl.RequestOptionFunc {
	return func(req *retryablehttp.Request) error {
		q := req.URL.Query()
		q.Set("per_page", fmt.Sprint(n))
		req.URL.RawQuery = q.Encode()
		return nil
	}
}
