package githubfake

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// failure answers the next requests of an operation with an error status.
type failure struct {
	operation string // "" matches every operation
	status    int
	times     int
	// until, when set, makes the failure last until the fake's clock
	// reaches it, whatever the number of requests (times is then unused).
	until time.Time
}

// FailNext answers the next times requests of operation ("" for any) with status (a 5xx, say)
// and GitHub's error body, without serving them.
func (s *Server) FailNext(operation string, status, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &failure{operation: operation, status: status, times: times})
}

// FailFor answers every request of operation ("" for any) with status (a 5xx, say) and
// GitHub's error body, without serving it, until the fake's clock has moved d on.
func (s *Server) FailFor(operation string, status int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &failure{operation: operation, status: status, until: s.clock().Add(d)})
}

// ExhaustPrimary spends the hourly budget until reset: every request is answered 403 with
// x-ratelimit-remaining 0 and x-ratelimit-reset set to reset, until the fake's clock reaches it.
func (s *Server) ExhaustPrimary(reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.primary = reset
	s.remaining = 0
}

// Slow makes every request of operation ("" for any) wait d before it is served, as a
// GitHub under load answers; 0 ends it.
func (s *Server) Slow(operation string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slow == nil {
		s.slow = map[string]time.Duration{}
	}
	s.slow[operation] = d
}

// slowness is how long a request of op waits before it is served (Slow).
func (s *Server) slowness(op string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.slow[op], s.slow[""])
}

// LimitSecondary starts a secondary (burst) limit for d: every request is answered 429 with a
// retry-after of the seconds left, until the fake's clock has moved d on.
func (s *Server) LimitSecondary(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secondary = s.clock().Add(d)
}

// limited sets the rate-limit headers of a response and tells whether the request is refused:
// by a rate limit (status 403 or 429, with the retry-after value, if any) or an injected
// failure.
func (s *Server) limited(op string, header http.Header) (status int, retryAfter, message string, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	reset := now.Add(time.Hour)
	if now.Before(s.primary) {
		reset = s.primary
	} else if !s.primary.IsZero() {
		s.primary = time.Time{}
		s.remaining = hourlyBudget
	}
	header.Set("X-Ratelimit-Limit", strconv.Itoa(hourlyBudget))
	header.Set("X-Ratelimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	header.Set("X-Ratelimit-Resource", "core")
	setRemaining := func() {
		header.Set("X-Ratelimit-Remaining", strconv.Itoa(s.remaining))
		header.Set("X-Ratelimit-Used", strconv.Itoa(hourlyBudget-s.remaining))
	}
	if now.Before(s.primary) {
		s.remaining = 0
		setRemaining()
		return http.StatusForbidden, "", "API rate limit exceeded for user. (But here's the good news: Authenticated requests get a higher rate limit.)", true
	}
	if now.Before(s.secondary) {
		setRemaining()
		secs := int64(math.Ceil(s.secondary.Sub(now).Seconds()))
		return http.StatusTooManyRequests, strconv.FormatInt(secs, 10), "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", true
	}
	if s.remaining > 0 {
		s.remaining--
	}
	setRemaining()
	for i, f := range s.failures {
		if f.operation != "" && f.operation != op {
			continue
		}
		if !f.until.IsZero() {
			if now.Before(f.until) {
				return f.status, "", http.StatusText(f.status), true
			}
			continue // over: left in place, it matches nothing more
		}
		f.times--
		if f.times <= 0 {
			s.failures = append(s.failures[:i], s.failures[i+1:]...)
		}
		return f.status, "", http.StatusText(f.status), true
	}
	return 0, "", "", false
}
