package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// maxErrorBody caps how much of an error response is read to find GitHub's message.
const maxErrorBody = 64 << 10

// idempotentKey marks a request context: the request may be sent again after a server error
// even though its method is POST (creating content-addressed Git objects).
type idempotentKey struct{}

// withIdempotent marks ctx's requests as safe to repeat.
func withIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

// retryTransport repeats requests that failed with a 5xx or a network error, with exponential
// back-off and jitter. Only requests that are safe to repeat are: GET, HEAD, PUT, DELETE, PATCH
// and those marked withIdempotent. Rate limits are never retried here: they are returned.
type retryTransport struct {
	next       http.RoundTripper
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	repeatable := isRepeatable(req)
	for attempt := 0; ; attempt++ {
		try := req
		if attempt > 0 {
			var err error
			if try, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := t.next.RoundTrip(try)
		retry := repeatable && attempt < t.maxRetries && retryable(resp, err)
		if !retry {
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

func isRepeatable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	v, _ := req.Context().Value(idempotentKey{}).(bool)
	return v
}

// retryable tells a server error or a transport failure from everything else. A rate limit
// refusal of the gate is not retried.
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
		return nil
	}
}

// rateLimitRefusal is the transport error of a request the gate did not send.
type rateLimitRefusal struct{ err error }

func (r *rateLimitRefusal) Error() string { return r.err.Error() }
func (r *rateLimitRefusal) Unwrap() error { return r.err }

// gateTransport refuses requests while GitHub's rate limit says to wait, and records the limits
// every response reports. A response that is a rate limit (403 or 429) becomes a
// *rateLimitRefusal error carrying the scm.RateLimitError.
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
	message := ""
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests {
		message = peekMessage(resp)
	}
	if limit, limited := t.gate.observe(resp, message, t.now()); limited {
		// Answered as an error here, so that go-github keeps no rate-limit state of its own
		// and this gate stays the one place that decides when to send again.
		_ = resp.Body.Close()
		return nil, &rateLimitRefusal{err: &limit}
	}
	return resp, nil
}

// peekMessage reads GitHub's error "message" from a response and puts the body back.
func peekMessage(resp *http.Response) string {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	return strings.TrimSpace(body.Message)
}

// tokenSource hands out the bearer token of the requests.
type tokenSource interface {
	// Token returns a valid token.
	Token(ctx context.Context) (string, error)
	// Invalidate drops token if it is the one cached: GitHub no longer accepts it.
	Invalidate(token string)
}

// staticToken is a personal access token or any other token that does not expire on its own.
type staticToken string

// Token implements tokenSource.
func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }

// Invalidate implements tokenSource.
func (staticToken) Invalidate(string) {}

// authTransport sets the Authorization header.
type authTransport struct {
	next   http.RoundTripper
	tokens tokenSource
}

// RoundTrip implements http.RoundTripper.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := t.tokens.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	authed := req.Clone(req.Context())
	authed.Header.Set("Authorization", "Bearer "+token)
	resp, err := t.next.RoundTrip(authed)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.tokens.Invalidate(token)
	}
	return resp, err
}
