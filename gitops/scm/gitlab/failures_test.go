package gitlab

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

const routeGetMR = "GET /projects/:id/merge_requests/:iid"

func TestRateLimit_a429ClosesTheGateUntilRetryAfter(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	obs := newCountingObserver()
	c := w.client(t, Options{Observer: obs})
	w.fake.Throttle(90 * time.Second)

	_, err := c.PullRequest(ctx, 1)
	var limited *scm.RateLimitError
	if !errors.As(err, &limited) || !limited.RetryAt.Equal(w.clock.Now().Add(90*time.Second)) || !limited.Secondary {
		t.Fatalf("PullRequest under a 429 = %v; want a secondary RateLimitError retrying at +90s", err)
	}
	if at, ok := scm.RetryAt(err); !ok || !at.Equal(limited.RetryAt) {
		t.Fatalf("scm.RetryAt = %v, %v", at, ok)
	}
	// Until then, nothing is sent.
	sent := len(w.fake.Requests())
	if _, err := c.Labels(ctx, 1); !errors.As(err, &limited) {
		t.Fatalf("a request while waiting = %v; want a RateLimitError", err)
	}
	if n := len(w.fake.Requests()) - sent; n != 0 {
		t.Fatalf("%d requests sent while waiting for the rate limit", n)
	}
	if obs.count("GET /projects/{id}/merge_requests/{n} 429") != 1 {
		t.Fatalf("observed = %v; want the 429 counted once", obs.requests)
	}
	// After it, requests go out again (no merge request !1 exists: a NotFoundError).
	w.clock.Advance(91 * time.Second)
	if _, err := c.PullRequest(ctx, 1); !scm.IsNotFound(err) {
		t.Fatalf("PullRequest after the wait = %v; want a NotFoundError", err)
	}
}

func TestRateLimit_theLastRequestOfTheBudgetWaitsForTheReset(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	obs := newCountingObserver()
	c := w.client(t, Options{Observer: obs})
	w.fake.SetRateLimit(2, time.Minute)
	reset := w.clock.Now().Add(time.Minute)

	// The first request is answered with one left; the second uses the last one.
	if _, err := c.PullRequest(ctx, 1); !scm.IsNotFound(err) {
		t.Fatalf("first request: %v", err)
	}
	if obs.remaining != 1 {
		t.Fatalf("budget observed = %d, want 1", obs.remaining)
	}
	if _, err := c.PullRequest(ctx, 1); !scm.IsNotFound(err) {
		t.Fatalf("second request: %v", err)
	}
	// The third is not sent: the budget is spent until RateLimit-Reset.
	sent := len(w.fake.Requests())
	_, err := c.PullRequest(ctx, 1)
	var limited *scm.RateLimitError
	if !errors.As(err, &limited) || !limited.RetryAt.Equal(reset) || limited.Secondary {
		t.Fatalf("third request = %v; want a primary RateLimitError until %s", err, reset)
	}
	if len(w.fake.Requests()) != sent {
		t.Fatal("a request was sent with no budget left")
	}
	w.clock.Advance(time.Minute)
	if _, err := c.PullRequest(ctx, 1); !scm.IsNotFound(err) {
		t.Fatalf("after the reset: %v", err)
	}
}

func TestRateLimit_a429WithABudgetRetriesAtTheReset(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	// Another client of the same token spends the budget; ours meets the 429.
	w.fake.SetRateLimit(1, time.Minute)
	check(t, ignoreNotFound(w.client(t, Options{}).PullRequest(ctx, 1)))
	c := w.client(t, Options{})
	_, err := c.PullRequest(ctx, 1)
	var limited *scm.RateLimitError
	if !errors.As(err, &limited) || limited.Secondary || !limited.RetryAt.Equal(w.clock.Now().Add(time.Minute)) {
		t.Fatalf("PullRequest over the budget = %v; want a primary RateLimitError at the reset", err)
	}
}

func TestServerErrors_areRetriedForReads_notForWrites(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	obs := newCountingObserver()
	c := w.client(t, Options{Observer: obs})
	w.fake.FailNext(routeGetMR, http.StatusBadGateway, 2)
	if _, err := c.PullRequest(ctx, 1); !scm.IsNotFound(err) {
		t.Fatalf("PullRequest through two 502s = %v; want the answer after retrying", err)
	}
	if obs.count("GET /projects/{id}/merge_requests/{n} 502") != 2 || w.fake.Count(routeGetMR) != 3 {
		t.Fatalf("observed %v, %d requests; want two 502s then an answer", obs.requests, w.fake.Count(routeGetMR))
	}
	w.fake.FailNext(routeGetMR, http.StatusServiceUnavailable, 10)
	if _, err := c.PullRequest(ctx, 1); err == nil || scm.IsNotFound(err) {
		t.Fatalf("PullRequest while GitLab is down = %v; want the server error", err)
	}
	if n := w.fake.Count(routeGetMR); n != 3+1+DefaultMaxRetries {
		t.Fatalf("requests = %d; want %d (%d retries)", n, 3+1+DefaultMaxRetries, DefaultMaxRetries)
	}
}

func TestCredentials_aBadTokenIsUnauthorized(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{Token: "glpat-wrong"})
	_, err := c.PullRequest(ctx, 1)
	var ue *scm.UnauthorizedError
	if !errors.As(err, &ue) || ue.StatusCode != http.StatusUnauthorized || ue.Message != "401 Unauthorized" {
		t.Fatalf("PullRequest with a bad token = %v; want UnauthorizedError 401 with GitLab's message", err)
	}
}

func ignoreNotFound(_ scm.PullRequest, err error) error {
	if scm.IsNotFound(err) {
		return nil
	}
	return err
}
