package gitea

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// maxErrorBody caps how much of a discarded response is drained.
const maxErrorBody = 64 << 10

// defaultLimitWait is how long the client waits after a 429 that names no Retry-After.
const defaultLimitWait = time.Minute

// observeTransport tells an scm.Observer about every request that reaches the network: the
// operation and its outcome, and the budget left when a proxy in front of the server reports
// one (Gitea itself sends no rate-limit headers).
type observeTransport struct {
	next     http.RoundTripper
	observer scm.Observer
}

// RoundTrip implements http.RoundTripper.
func (t *observeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	op := req.Method + " " + route(req.URL.Path)
	if err != nil {
		t.observer.Request(op, "error")
		return resp, err
	}
	t.observer.Request(op, strconv.Itoa(resp.StatusCode))
	if v := resp.Header.Get("X-RateLimit-Remaining"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			t.observer.RateLimit(n)
		}
	}
	return resp, nil
}

// route turns an API path into its route, so that metrics have a bounded set of operations:
// the prefix up to /api/v1 goes, the owner and repository of /repos/{owner}/{repo}/... go, and
// numbers, commit SHAs and the names after users, orgs, collaborators, members and
// branches become placeholders.
func route(path string) string {
	if i := strings.Index(path, "/api/v1/"); i >= 0 {
		path = path[i+len("/api/v1"):]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	out := make([]string, 0, len(parts))
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		switch {
		case i == 0 && p == "repos" && len(parts) >= 3:
			out = append(out, "repos")
			i += 2 // owner and repo
		case isNumber(p):
			out = append(out, "{n}")
		case commitid.Valid(p):
			out = append(out, "{sha}")
		case i > 0 && named(parts[i-1]):
			out = append(out, "{name}")
		default:
			out = append(out, p)
		}
	}
	return "/" + strings.Join(out, "/")
}

// named reports whether the segment after seg is a name, not a route word.
func named(seg string) bool {
	switch seg {
	case "collaborators", "members", "orgs", "users", "branches":
		return true
	}
	return false
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rateLimitRefusal is the transport error of a request the gate did not send, or of a 429.
type rateLimitRefusal struct{ err *scm.RateLimitError }

func (r *rateLimitRefusal) Error() string { return r.err.Error() }
func (r *rateLimitRefusal) Unwrap() error { return r.err }

// gate remembers until when the server refuses requests, so that nothing is sent before then.
type gate struct {
	mu      sync.Mutex
	until   time.Time
	message string
}

// refusal returns the error to answer a request with while the gate is closed.
func (g *gate) refusal(now time.Time) *scm.RateLimitError {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !now.Before(g.until) {
		return nil
	}
	msg := "not sent: waiting for the rate limit to reset"
	if g.message != "" {
		msg += " (" + g.message + ")"
	}
	return &scm.RateLimitError{RetryAt: g.until, Secondary: true, Message: msg}
}

func (g *gate) closeUntil(until time.Time, message string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.until) {
		g.until, g.message = until, message
	}
}

// gateTransport refuses requests while the server has asked to wait. Gitea and Forgejo have no
// request budget of their own; a proxy in front of them (Codeberg's, for one) answers 429, or
// 503 with Retry-After, which closes the gate until the time it names.
type gateTransport struct {
	next http.RoundTripper
	gate *gate
	now  func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *gateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if refusal := t.gate.refusal(t.now()); refusal != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &rateLimitRefusal{err: refusal}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	now := t.now()
	wait, named := retryAfter(resp.Header.Get("Retry-After"), now)
	limited := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable && named
	if !limited {
		return resp, nil
	}
	if !named {
		wait = defaultLimitWait
	}
	message := resp.Status
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	limit := &scm.RateLimitError{RetryAt: now.Add(wait), Secondary: true, Message: message}
	t.gate.closeUntil(limit.RetryAt, message)
	return nil, &rateLimitRefusal{err: limit}
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// retryTransport repeats requests that failed with a 5xx or a network error, with exponential
// back-off and jitter. Only requests that are safe to repeat are: GET, HEAD, PUT and DELETE (a
// POST or PATCH that failed may have been applied). Rate limits are never retried here.
type retryTransport struct {
	next       http.RoundTripper
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	repeatable := req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodPut || req.Method == http.MethodDelete
	for attempt := 0; ; attempt++ {
		try := req
		if attempt > 0 {
			var err error
			if try, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := t.next.RoundTrip(try)
		if !repeatable || attempt >= t.maxRetries || !retryable(resp, err) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			_ = resp.Body.Close()
		}
		if err := sleep(req.Context(), t.backoff(attempt)); err != nil {
			return nil, err
		}
	}
}

// backoff is the wait before retry attempt+1: base*2^attempt capped at maxDelay, with jitter
// drawn from its upper half.
func (t *retryTransport) backoff(attempt int) time.Duration {
	d := t.baseDelay
	for i := 0; i < attempt && d < t.maxDelay; i++ {
		d *= 2
	}
	d = min(d, t.maxDelay)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)))
}

// retryable tells a server error or a transport failure from everything else; a rate-limit
// refusal and a cancelled request are not retried.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		var refusal *rateLimitRefusal
		return !errors.As(err, &refusal) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return resp.StatusCode >= http.StatusInternalServerError
}

// rewind returns a copy of req with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	clone := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return clone, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("cannot resend a request whose body cannot be read again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	clone.Body = body
	return clone, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	return nil
}
