// Package gitea implements sluice's SCM capabilities (gitops/scm) for Gitea and Forgejo (which
// keeps Gitea's API) with code.gitea.io/sdk/gitea.
//
// A Client is bound to one repository and authenticates with an access token. It refuses to
// send anything while the server (or a proxy in front of it) has asked to wait with 429 and
// Retry-After (and says until when, as a scm.RateLimitError), retries server errors of requests
// that are safe to repeat with exponential back-off and jitter, and posts a commit status only
// when it changes.
//
// The SDK takes its context when a client is built, so every call builds a light SDK client
// around the shared HTTP client with the call's context.
// Where the SDK cannot express a request (pagination of combined statuses, the issue timeline,
// whose label field it decodes with the wrong type), the request goes through the same HTTP
// client with the SDK's types.
package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "code.gitea.io/sdk/gitea"

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
	// DefaultStatusCacheSize is how many (commit, context) statuses are remembered as posted.
	DefaultStatusCacheSize = 4096
	// DefaultCommentCacheSize is how many (pull request, key) comments are remembered as
	// posted.
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
	// BaseURL is the server's root URL, e.g. "https://gitea.example.com/" or
	// "https://codeberg.org/" (the API is under "api/v1"). Required.
	BaseURL string
	// Token is an access token. It needs the scopes write:repository (statuses, pull requests,
	// the revert branch), write:issue (the label history of pull requests, and sluice's comment
	// on them), read:organization (teams) and read:user (who the token is, to tell sluice's own
	// comments from others'). Its user needs admin rights on the repository to read other users' permissions,
	// and membership of every team whose members it reads. Required.
	Token string
	// CloneURL is the repository's HTTP(S) Git URL the revert branch is pushed to; empty means
	// the clone URL the API reports.
	CloneURL string
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
	// StatusCacheSize bounds the statuses remembered as posted; zero takes the default.
	StatusCacheSize int
}

// Client implements the scm capabilities for one Gitea or Forgejo repository.
type Client struct {
	base  string // the server's root URL, without a trailing slash
	token string
	owner string
	repo  string
	clone string
	agent string
	http  *http.Client
	now   func() time.Time

	statusMu sync.Mutex
	statuses *scm.StatusMemory

	// comments keeps sluice's comments on pull requests.
	comments *scm.StickyComments

	// commitPull records that the server answers GET /repos/{o}/{r}/commits/{sha}/pull (recent
	// Gitea; not every server): once it has answered, its 404 means "no merged pull request".
	commitPullMu sync.Mutex
	commitPull   bool
}

// The capabilities a Client implements.
var (
	_ scm.CommitStatusWriter = (*Client)(nil)
	_ scm.PullRequestReader  = (*Client)(nil)
	_ scm.PermissionReader   = (*Client)(nil)
	_ scm.TeamReader         = (*Client)(nil)
	_ scm.RevertProposer     = (*Client)(nil)
)

// New builds a Client from opts. It sends nothing.
func New(opts Options) (*Client, error) {
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("gitea: owner and repo are required")
	}
	if opts.Token == "" {
		return nil, errors.New("gitea: token is required")
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
	return &Client{
		base:     base,
		token:    opts.Token,
		owner:    opts.Owner,
		repo:     opts.Repo,
		clone:    opts.CloneURL,
		agent:    opts.UserAgent,
		http:     &http.Client{Transport: rt, Timeout: httpClient.Timeout, CheckRedirect: httpClient.CheckRedirect},
		now:      opts.Now,
		statuses: scm.NewStatusMemory(opts.StatusCacheSize),
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

// baseURL checks the server's root URL and returns it without a trailing slash (the SDK adds
// "/api/v1/..." to it).
func baseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("gitea: base URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("gitea: base URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("gitea: base URL %q is not an http(s) URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("gitea: base URL %q has a query or fragment", raw)
	}
	path := strings.TrimSuffix(u.Path, "/")
	if strings.HasSuffix(path, "/api/v1") {
		return "", fmt.Errorf("gitea: base URL %q must be the server's root, without /api/v1", raw)
	}
	u.Path = path
	return strings.TrimSuffix(u.String(), "/"), nil
}

// api returns an SDK client whose requests carry ctx. The SDK's per-feature version checks are
// off (they would cost a request per client, and Forgejo's versions do not follow Gitea's): a
// server that lacks an endpoint answers 404, which the callers that can fall back handle.
func (c *Client) api(ctx context.Context) *sdk.Client {
	// NewClient fails only when an option does or the version check does; neither can here.
	client, _ := sdk.NewClient(c.base, sdk.SetHTTPClient(c.http), sdk.SetToken(c.token), sdk.SetUserAgent(c.agent),
		sdk.SetContext(ctx), sdk.SetGiteaVersion(""))
	return client
}

// repoPath is "/repos/{owner}/{repo}" with both escaped.
func (c *Client) repoPath() string {
	return "/repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.repo)
}
