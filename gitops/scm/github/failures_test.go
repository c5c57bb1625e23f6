package github

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestRetry_serverErrorThenSuccess(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	c := newTestClient(t, fake, clock)

	// Given GitHub answers 500 twice, when the controller reads, then the client retries and
	// succeeds on the third attempt.
	fake.FailNext("repos/list-pull-requests-associated-with-commit", http.StatusInternalServerError, 2)
	if _, err := c.PullRequestsForCommit(context.Background(), sha); err != nil {
		t.Fatalf("PullRequestsForCommit after two 500s: %v", err)
	}
	var statuses []int
	for _, r := range fake.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{500, 500, 200}; !equalInts(statuses, want) {
		t.Fatalf("answers = %v, want %v", statuses, want)
	}

	// Given GitHub keeps failing, the client gives up after DefaultMaxRetries retries.
	fake.FailNext("repos/list-pull-requests-associated-with-commit", http.StatusBadGateway, 10)
	if _, err := c.PullRequestsForCommit(context.Background(), sha); err == nil {
		t.Fatal("PullRequestsForCommit succeeded against a failing server")
	}
	if n := fake.Count("repos/list-pull-requests-associated-with-commit"); n != 3+1+DefaultMaxRetries {
		t.Fatalf("requests = %d, want %d", n, 3+1+DefaultMaxRetries)
	}
}

func TestRetry_statusPostIsNotRepeatedBlindly(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	status := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "step 1/2"}

	// Given the status POST fails with a 500, SetStatus reports the error without repeating the
	// POST (a 5xx may hide a status that was created).
	fake.FailNext("repos/create-commit-status", http.StatusInternalServerError, 1)
	if posted, err := c.SetStatus(ctx, sha, status); err == nil || posted {
		t.Fatalf("SetStatus through a 500 = %v, %v; want an error", posted, err)
	}
	if n := fake.Count("repos/create-commit-status"); n != 1 {
		t.Fatalf("status POSTs = %d, want 1", n)
	}
	// The next call lists the statuses again before posting, then posts once.
	lists := fake.Count("repos/list-commit-statuses-for-ref")
	if posted, err := c.SetStatus(ctx, sha, status); err != nil || !posted {
		t.Fatalf("SetStatus after the failure = %v, %v; want posted", posted, err)
	}
	if fake.Count("repos/list-commit-statuses-for-ref") != lists+1 || len(fake.Statuses(testRepo, sha)) != 1 {
		t.Fatal("the retry did not check the statuses first, or posted twice")
	}
}

func TestRateLimit_primaryExhausted_noRequestsUntilReset(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	reset := clock.Now().Add(20 * time.Minute)

	// Given the hourly budget is spent until reset, when the client reads, then it gets a
	// RateLimitError naming the reset time.
	fake.ExhaustPrimary(reset)
	_, err := c.PullRequestsForCommit(ctx, sha)
	var rl *scm.RateLimitError
	if !errors.As(err, &rl) || rl.Secondary || !rl.RetryAt.Equal(reset.Truncate(time.Second)) {
		t.Fatalf("error = %v, want a primary RateLimitError until %s", err, reset)
	}
	sent := len(fake.Requests())
	if sent != 1 {
		t.Fatalf("requests = %d, want 1 (a 403 is not retried)", sent)
	}
	// While it lasts, nothing is sent: every call fails at once with the same reset time.
	clock.Advance(10 * time.Minute)
	for _, call := range []func() error{
		func() error { _, err := c.PullRequestsForCommit(ctx, sha); return err },
		func() error { _, err := c.Permission(ctx, "acme"); return err },
		func() error {
			_, err := c.SetStatus(ctx, sha, scm.CommitStatus{Context: "c", State: scm.StatePending})
			return err
		},
	} {
		if at, ok := scm.RetryAt(call()); !ok || !at.Equal(reset.Truncate(time.Second)) {
			t.Fatalf("call while limited: retry at %v, %v; want %s", at, ok, reset)
		}
	}
	if n := len(fake.Requests()); n != sent {
		t.Fatalf("requests while limited = %d, want %d", n, sent)
	}
	// After the reset, requests flow again.
	clock.Advance(10*time.Minute + time.Second)
	if _, err := c.PullRequestsForCommit(ctx, sha); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	if n := len(fake.Requests()); n != sent+1 {
		t.Fatalf("requests after the reset = %d, want %d", n, sent+1)
	}
}

func TestRateLimit_secondaryRetryAfter(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()

	// Given a secondary limit of 90 s, a status post gets a secondary RateLimitError 90 s out.
	fake.LimitSecondary(90 * time.Second)
	status := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StateSuccess}
	_, err := c.SetStatus(ctx, sha, status)
	var rl *scm.RateLimitError
	if !errors.As(err, &rl) || !rl.Secondary || !rl.RetryAt.Equal(clock.Now().Add(90*time.Second)) {
		t.Fatalf("error = %v, want a secondary RateLimitError 90s out", err)
	}
	sent := len(fake.Requests())
	if sent != 1 || fake.Requests()[0].Status != http.StatusTooManyRequests {
		t.Fatalf("requests = %+v, want one 429", fake.Requests())
	}
	clock.Advance(60 * time.Second)
	if _, err := c.SetStatus(ctx, sha, status); !errors.As(err, &rl) {
		t.Fatalf("error before retry-after = %v, want a RateLimitError", err)
	}
	if n := len(fake.Requests()); n != sent {
		t.Fatalf("requests before retry-after passed = %d, want %d", n, sent)
	}
	clock.Advance(31 * time.Second)
	if posted, err := c.SetStatus(ctx, sha, status); err != nil || !posted {
		t.Fatalf("SetStatus after retry-after = %v, %v; want posted", posted, err)
	}
	if got := fake.Statuses(testRepo, sha); len(got) != 1 || got[0].State != "success" {
		t.Fatalf("statuses = %+v", got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
