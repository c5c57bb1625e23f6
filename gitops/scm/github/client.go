// Package github implements sluice's SCM capabilities (gitops/scm) for GitHub and GitHub
// Enterprise Server with go-github.
//
// A Client is bound to one repository. It authenticates with a token or as a GitHub App
// installation, refuses to send anything while GitHub's rate limit says to wait (and says until
// when, as a scm.RateLimitError), retries server errors with exponential back-off and jitter,
// makes every GET conditional on the last ETag (a 304 costs nothing), and posts a commit status
// only when it changes.
package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Defaults of Options.
const (
	// DefaultBaseURL is GitHub.com's REST API.
	DefaultBaseURL = "https://api.github.com/"
	// DefaultMaxRetries is how often a server error is retried.
	DefaultMaxRetries = 3
	// DefaultRetryBaseDelay is the first back-off after a server error; it doubles each time.
	DefaultRetryBaseDelay = 500 * time.Millisecond
	// DefaultRetryMaxDelay caps the back-off.
	DefaultRetryMaxDelay = 10 * time.Second
	// DefaultETagCacheSize is how many GET responses are kept for conditional requests.
	DefaultETagCacheSize = 512
	// DefaultStatusCacheSize is how many (commit, context) statuses are remembered as posted.
	DefaultStatusCacheSize = 4096
	// DefaultCommentCacheSize is how many (pull request, key) comments are remembered as posted,
	// and how many (commit, name) check runs.
	DefaultCommentCacheSize = 1024
	// DefaultRequestTimeout bounds one HTTP request when Options.HTTPClient is not set.
	DefaultRequestTimeout = 30 * time.Second
)

// Options configure a Client.
type Options struct {
	// Owner is the repository's owner (user or organisation).
	Owner string
	// Repo is the repository's name.
	Repo string
	// BaseURL is the REST API's root: "https://api.github.com/" (the default) or, for GitHub
	// Enterprise Server, "https://<host>/api/v3/".
	BaseURL string
	// Token authenticates with a personal access token (classic or fine-grained) or any other
	// bearer token. Exactly one of Token and App is set.
	Token string
	// App authenticates as a GitHub App installation.
	App *AppCredentials
	// HTTPClient sends the requests (its Transport is wrapped); defaults to one with
	// DefaultRequestTimeout.
	HTTPClient *http.Client
	// UserAgent names the client to GitHub; defaults to "sluice".
	UserAgent string
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
	// MaxRetries, RetryBaseDelay and RetryMaxDelay shape the retries of server errors; zero
	// values take the defaults, a negative MaxRetries disables retries.
	MaxRetries     int
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Observer is told about every request sent to GitHub, retries included; nil tells nobody.
	Observer scm.Observer
	// ETagCacheSize, StatusCacheSize and CommentCacheSize bound the client's memory; zero
	// takes the defaults.
	ETagCacheSize    int
	StatusCacheSize  int
	CommentCacheSize int
}

// Client implements the scm capabilities for one GitHub repository.
type Client struct {
	gh    *gh.Client
	owner string
	repo  string
	now   func() time.Time

	statusMu sync.Mutex
	statuses *scm.StatusMemory

	// comments keeps sluice's comments on pull requests.
	comments *scm.StickyComments
	// appAPI calls the API as the GitHub App itself (its JWT), for what an installation
	// token cannot read; nil with a token.
	appAPI *gh.Client
}

// The capabilities a Client implements.
var (
	_ scm.CommitStatusWriter = (*Client)(nil)
	_ scm.PullRequestReader  = (*Client)(nil)
	_ scm.PermissionReader   = (*Client)(nil)
	_ scm.RevertProposer     = (*Client)(nil)
)

// New builds a Client from opts.
func New(opts Options) (*Client, error) {
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("github: owner and repo are required")
	}
	if (opts.Token == "") == (opts.App == nil) {
		return nil, errors.New("github: exactly one of a token and app credentials is required")
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
	limits := &gate{}
	// chain is the transport of the requests: retries, the rate-limit gate, conditional GETs
	// and, with tokens, the Authorization header (the App's token requests carry the JWT
	// ghinstallation signs instead).
	chain := func(tokens tokenSource) http.RoundTripper {
		rt := next
		if tokens != nil {
			rt = &authTransport{next: next, tokens: tokens}
		}
		rt = &etagTransport{next: rt, size: opts.ETagCacheSize}
		rt = &gateTransport{next: rt, gate: limits, now: opts.Now}
		return &retryTransport{next: rt, maxRetries: max(opts.MaxRetries, 0), baseDelay: opts.RetryBaseDelay, maxDelay: opts.RetryMaxDelay}
	}
	var tokens tokenSource = staticToken(opts.Token)
	var appAPI *gh.Client
	if opts.App != nil {
		installation, err := newInstallationTokens(opts.App, opts.Repo, base.String(), chain(nil), httpClient.Timeout, opts.Now)
		if err != nil {
			return nil, err
		}
		tokens = installation
		appAPI = gh.NewClient(&http.Client{Transport: installation.apps, Timeout: httpClient.Timeout, CheckRedirect: httpClient.CheckRedirect})
		appAPI.BaseURL = base
		appAPI.UserAgent = opts.UserAgent
	}
	client := gh.NewClient(&http.Client{Transport: chain(tokens), Timeout: httpClient.Timeout, CheckRedirect: httpClient.CheckRedirect})
	client.BaseURL = base
	client.UserAgent = opts.UserAgent
	return &Client{
		gh:       client,
		owner:    opts.Owner,
		repo:     opts.Repo,
		now:      opts.Now,
		statuses: scm.NewStatusMemory(opts.StatusCacheSize),
		comments: scm.NewStickyComments(opts.CommentCacheSize),
		appAPI:   appAPI,
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
	if opts.ETagCacheSize <= 0 {
		opts.ETagCacheSize = DefaultETagCacheSize
	}
	if opts.StatusCacheSize <= 0 {
		opts.StatusCacheSize = DefaultStatusCacheSize
	}
	if opts.CommentCacheSize <= 0 {
		opts.CommentCacheSize = DefaultCommentCacheSize
	}
	return opts
}

// baseURL parses the API root and makes sure it ends with a slash, as go-github requires.
func baseURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("github: base URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("github: base URL %q is not an http(s) URL", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// mapError turns what go-github returns into the scm errors. what names the object asked for.
func mapError(err error, resp *gh.Response, what string, now time.Time) error {
	if err == nil {
		return nil
	}
	var limited *scm.RateLimitError
	if errors.As(err, &limited) {
		return fmt.Errorf("%s: %w", what, limited)
	}
	var ghErr *gh.ErrorResponse
	message := ""
	if errors.As(err, &ghErr) {
		message = ghErr.Message
	}
	if resp != nil && resp.Response != nil {
		if rl, ok := limitFrom(resp.Response, message, now, 0); ok {
			return fmt.Errorf("%s: %w", what, &rl)
		}
	}
	var primary *gh.RateLimitError
	if errors.As(err, &primary) {
		return fmt.Errorf("%s: %w", what, &scm.RateLimitError{RetryAt: primary.Rate.Reset.Time, Message: primary.Message})
	}
	var secondary *gh.AbuseRateLimitError
	if errors.As(err, &secondary) {
		wait := secondaryFirstWait
		if secondary.RetryAfter != nil {
			wait = *secondary.RetryAfter
		}
		return fmt.Errorf("%s: %w", what, &scm.RateLimitError{RetryAt: now.Add(wait), Secondary: true, Message: secondary.Message})
	}
	if ghErr != nil && ghErr.Response != nil {
		switch ghErr.Response.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w", what, &scm.NotFoundError{What: what, Message: message})
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%s: %w", what, &scm.UnauthorizedError{StatusCode: ghErr.Response.StatusCode, Message: message})
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// statusCode returns the HTTP status of a go-github error, 0 if it has none.
func statusCode(err error) int {
	var ghErr *gh.ErrorResponse
	if errors.As(err, &ghErr) && ghErr.Response != nil {
		return ghErr.Response.StatusCode
	}
	return 0
}
