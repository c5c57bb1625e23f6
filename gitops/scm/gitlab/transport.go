package gitlab

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

// defaultLimitWait is how long the client waits after a 429 that names no Retry-After and no
// RateLimit-Reset.
const defaultLimitWait = time.Minute

// observeTransport tells an scm.Observer about every request that reaches the network: the
// operation, its outcome and the budget GitLab reports left (RateLimit-Remaining).
type observeTransport struct {
	next     http.RoundTripper
	observer scm.Observer
}

// RoundTrip implements http.RoundTripper.
func (t *observeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	op := req.Method + " " + route(req.URL.EscapedPath())
	if err != nil {
		t.observer.Request(op, "error")
		return resp, err
	}
	t.observer.Request(op, strconv.Itoa(resp.StatusCode))
	if v := resp.Header.Get("RateLimit-Remaining"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			t.observer.RateLimit(n)
		}
	}
	return resp, nil
}

// route turns an escaped API path into its route, so that metrics have a bounded set of
// operations: the prefix up to /api/v4 goes; the segment after projects, groups and branches
// (a URL-encoded path or name) becomes {id} or {name}; numbers become {n} and commit SHAs {sha}.
func route(path string) string {
	if i := strings.Index(path, "/api/v4/"); i >= 0 {
		path = path[i+len("/api/v4"):]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		switch {
		case i > 0 && (parts[i-1] == "projects" || parts[i-1] == "groups"):
			out = append(out, "{id}")
		case i > 0 && parts[i-1] == "branches":
			out = append(out, "{name}")
		case isNumber(p):
			out = append(out, "{n}")
		case commitid.Valid(p):
			out = append(out, "{sha}")
		default:
			out = append(out, p)
		}
	}
	return "/" + strings.Join(out, "/")
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

// gate remembers until when GitLab refuses requests, so that nothing is sent before then.
type gate struct {
	mu        sync.Mutex
	until     time.Time
	secondary bool
	message   string
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
	return &scm.RateLimitError{RetryAt: g.until, Secondary: g.secondary, Message: msg}
}

func (g *gate) closeUntil(until time.Time, secondary bool, message string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.until) {
		g.until, g.secondary, g.message = until, secondary, message
	}
}

// gateTransport refuses requests while GitLab has asked to wait. GitLab's throttles answer 429
// with Retry-After (and, where the limit is a budget, RateLimit-Remaining 0 and RateLimit-Reset);
// a response that used the last request of the budget closes the gate until RateLimit-Reset
// too, so that the next request is not sent only to be refused.
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
	limit, limited := limitFrom(resp, now)
	if !limited {
		if until, ok := exhaustedUntil(resp, now); ok {
			t.gate.closeUntil(until, false, "no requests left in this window's budget")
		}
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	t.gate.closeUntil(limit.RetryAt, limit.Secondary, limit.Message)
	return nil, &rateLimitRefusal{err: limit}
}

// limitFrom reads a rate limit out of a 429 answer: when to retry from Retry-After, else from
// RateLimit-Reset, else a minute on. A limit with a budget (RateLimit-Remaining present) is
// primary, one without (a proxy's, or a per-endpoint throttle) secondary.
func limitFrom(resp *http.Response, now time.Time) (*scm.RateLimitError, bool) {
	if resp.StatusCode != http.StatusTooManyRequests {
		return nil, false
	}
	limit := &scm.RateLimitError{Secondary: resp.Header.Get("RateLimit-Remaining") == "", Message: resp.Status}
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
		limit.RetryAt = now.Add(d)
	} else if reset, ok := resetTime(resp.Header.Get("RateLimit-Reset")); ok && reset.After(now) {
		limit.RetryAt = reset
	} else {
		limit.RetryAt = now.Add(defaultLimitWait)
	}
	return limit, true
}

// exhaustedUntil tells, for an answer that is not a rate limit, whether it used the last request
// of the budget: then nothing more may be sent before RateLimit-Reset.
func exhaustedUntil(resp *http.Response, now time.Time) (time.Time, bool) {
	if resp.Header.Get("RateLimit-Remaining") != "0" {
		return time.Time{}, false
	}
	reset, ok := resetTime(resp.Header.Get("RateLimit-Reset"))
	if !ok || !reset.After(now) {
		return time.Time{}, false
	}
	return reset, true
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

// resetTime reads RateLimit-Reset (UTC epoch seconds).
func resetTime(v string) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// retryTransport repeats requests that failed with a 5xx or a network error, with exponential
// back-off and jitter. Only requests that are safe to repeat are: GET, HEAD, PUT and DELETE (a
// POST that failed may have been applied). Rate limits are never retried here.
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
	return resp.StatusCode >= http.StatusInternalServerError && resp.StatusCode != http.StatusNotImplemented
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
