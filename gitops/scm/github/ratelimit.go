package github

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Back-off for a secondary rate limit that names no retry-after: GitHub asks to wait at least a
// minute, then longer each time it happens again.
const (
	secondaryFirstWait = time.Minute
	secondaryMaxWait   = 15 * time.Minute
)

// limitFrom reads a rate limit out of a response. streak counts the secondary limits hit in a
// row before this one (it lengthens the wait when GitHub names none). ok is false for a response
// that is not a rate limit, a plain 403 "forbidden" included. message is the error body's
// "message", if read.
func limitFrom(resp *http.Response, message string, now time.Time, streak int) (scm.RateLimitError, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return scm.RateLimitError{}, false
	}
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
		return scm.RateLimitError{RetryAt: now.Add(d), Secondary: true, Message: message}, true
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, ok := resetTime(resp.Header.Get("X-Ratelimit-Reset")); ok {
			if !reset.After(now) {
				reset = now.Add(time.Second)
			}
			return scm.RateLimitError{RetryAt: reset, Message: message}, true
		}
	}
	lower := strings.ToLower(message)
	if resp.StatusCode == http.StatusTooManyRequests || strings.Contains(lower, "secondary rate limit") ||
		strings.Contains(lower, "abuse") || strings.Contains(lower, "rate limit exceeded") {
		wait := secondaryFirstWait
		for i := 0; i < streak && wait < secondaryMaxWait; i++ {
			wait *= 2
		}
		wait = min(wait, secondaryMaxWait)
		return scm.RateLimitError{RetryAt: now.Add(wait), Secondary: true, Message: message}, true
	}
	return scm.RateLimitError{}, false
}

// exhaustedUntil tells, for a response that is not itself a rate limit, whether it used the
// last request of the primary budget (x-ratelimit-remaining 0): then nothing more may be sent
// before the reset time.
func exhaustedUntil(resp *http.Response, now time.Time) (time.Time, bool) {
	if resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		return time.Time{}, false
	}
	reset, ok := resetTime(resp.Header.Get("X-Ratelimit-Reset"))
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

// resetTime reads x-ratelimit-reset (UTC epoch seconds).
func resetTime(v string) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// gate remembers until when GitHub refuses requests, so that nothing is sent before then.
type gate struct {
	mu        sync.Mutex
	until     time.Time
	secondary bool
	message   string
	streak    int
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

// observe records what a response says about the rate limits and returns the limit it hit, if
// any.
func (g *gate) observe(resp *http.Response, message string, now time.Time) (scm.RateLimitError, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rl, ok := limitFrom(resp, message, now, g.streak); ok {
		if rl.Secondary {
			g.streak++
		}
		g.closeUntil(rl.RetryAt, rl.Secondary, rl.Message)
		return rl, true
	}
	if resp.StatusCode < http.StatusBadRequest {
		g.streak = 0
	}
	if until, ok := exhaustedUntil(resp, now); ok {
		g.closeUntil(until, false, "no requests left in this hour's budget")
	}
	return scm.RateLimitError{}, false
}

func (g *gate) closeUntil(until time.Time, secondary bool, message string) {
	if until.After(g.until) {
		g.until, g.secondary, g.message = until, secondary, message
	}
}
