package gitlabfake

import (
	"net/http"
	"strconv"
	"time"
)

// limits is the fake's failure injection: injected errors and GitLab's request budget.
type limits struct {
	failures []*failure
	budget   int // requests per window; 0: no rate limit (and no RateLimit-* headers)
	window   time.Duration
	reset    time.Time // the end of the current window
	used     int
	blocked  time.Time // every request is refused with 429 until then
}

// failure answers the next requests of a route with an error status.
type failure struct {
	route  string // "" matches every route
	status int
	times  int
}

// FailNext answers the next times requests of route (as Request.Route names it; "" for any)
// with status (a 5xx, say) and GitLab's error body, without serving them.
func (s *Server) FailNext(route string, status, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.failures = append(s.limits.failures, &failure{route: route, status: status, times: times})
}

// SetRateLimit gives every token together a budget of requests per window (GitLab.com's
// authenticated API limit is 2000 a minute): each response carries RateLimit-Limit,
// RateLimit-Observed, RateLimit-Remaining, RateLimit-Reset and RateLimit-ResetTime, and a request
// over the budget is answered 429 "Retry later" with Retry-After, as GitLab's throttle does. Zero
// turns it off.
func (s *Server) SetRateLimit(budget int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.budget, s.limits.window, s.limits.used, s.limits.reset = budget, window, 0, time.Time{}
}

// Throttle answers every request 429 with a Retry-After of the seconds left for d (a limit
// without budget headers, as a proxy in front of GitLab may answer).
func (s *Server) Throttle(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.blocked = s.clock().Add(d)
}

// refusal is an answer given instead of serving a request.
type refusal struct {
	status int
	body   []byte
	text   bool // a plain-text body
}

// refuse applies injected failures and rate limits to a request of route; s.mu is held.
func (s *Server) refuse(routeName string, header http.Header) *refusal {
	now := s.clock()
	l := &s.limits
	if now.Before(l.blocked) {
		header.Set("Retry-After", strconv.Itoa(secondsUntil(now, l.blocked)))
		return &refusal{status: http.StatusTooManyRequests, body: []byte("Retry later\n"), text: true}
	}
	for i, f := range l.failures {
		if f.route != "" && f.route != routeName {
			continue
		}
		f.times--
		if f.times <= 0 {
			l.failures = append(l.failures[:i], l.failures[i+1:]...)
		}
		return &refusal{status: f.status, body: errorBody(&apiError{status: f.status, message: strconv.Itoa(f.status) + " " + http.StatusText(f.status)})}
	}
	if l.budget <= 0 {
		return nil
	}
	if !now.Before(l.reset) {
		l.reset, l.used = now.Add(l.window).Truncate(time.Second), 0
	}
	over := l.used >= l.budget
	if !over {
		l.used++
	}
	header.Set("RateLimit-Limit", strconv.Itoa(l.budget))
	header.Set("RateLimit-Observed", strconv.Itoa(l.used))
	header.Set("RateLimit-Remaining", strconv.Itoa(l.budget-l.used))
	header.Set("RateLimit-Reset", strconv.FormatInt(l.reset.Unix(), 10))
	header.Set("RateLimit-ResetTime", l.reset.UTC().Format(http.TimeFormat))
	if over {
		header.Set("Retry-After", strconv.Itoa(secondsUntil(now, l.reset)))
		return &refusal{status: http.StatusTooManyRequests, body: []byte("Retry later\n"), text: true}
	}
	return nil
}

func secondsUntil(now, t time.Time) int {
	return max(int((t.Sub(now)+time.Second-1)/time.Second), 1)
}
