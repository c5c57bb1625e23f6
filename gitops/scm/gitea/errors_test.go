package gitea

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestErrors_areTyped(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	sha, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	status := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending}

	// A token Gitea does not know is unauthorized.
	bad := newClient(t, repo, Options{Token: "0000000000000000000000000000000000000000"})
	if _, err := bad.SetStatus(ctx, sha, status); !scm.IsUnauthorized(err) {
		t.Errorf("SetStatus with an unknown token = %v, want an UnauthorizedError", err)
	}
	// A reader may not post statuses.
	reader := newClient(t, repo, Options{Token: world.carol.Token})
	if _, err := reader.SetStatus(ctx, sha, status); !scm.IsUnauthorized(err) {
		t.Errorf("SetStatus by a reader = %v, want an UnauthorizedError", err)
	}
	// A repository that does not exist, and a pull request that does not, are not found.
	missing := newClient(t, repo, Options{})
	missing.repo = "no-such-repo"
	if _, err := missing.PullRequestsForCommit(ctx, sha); !scm.IsNotFound(err) {
		t.Errorf("PullRequestsForCommit of a missing repository = %v, want a NotFoundError", err)
	}
	if _, err := newClient(t, repo, Options{}).PullRequest(ctx, 999); !scm.IsNotFound(err) {
		t.Errorf("PullRequest #999 = %v, want a NotFoundError", err)
	}
}

// flakyProxy forwards to Gitea, answering the next requests with the statuses queued in fail
// instead, and counts what reaches it.
type flakyProxy struct {
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	fail  []int
	retry string
	seen  int
}

func (p *flakyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen++
	var status int
	if len(p.fail) > 0 {
		status, p.fail = p.fail[0], p.fail[1:]
	}
	p.mu.Unlock()
	if status != 0 {
		if p.retry != "" {
			w.Header().Set("Retry-After", p.retry)
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	p.proxy.ServeHTTP(w, r)
}

func (p *flakyProxy) failNext(retryAfter string, statuses ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail, p.retry = statuses, retryAfter
}

func (p *flakyProxy) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

func TestRateLimits_andServerErrors_throughAProxy(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	sha, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	target, err := url.Parse(world.server.URL)
	check(t, err)
	flaky := &flakyProxy{proxy: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(flaky)
	t.Cleanup(front.Close)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	obs := newCountingObserver()
	c := newClient(t, repo, Options{BaseURL: front.URL, Now: clock, Observer: obs, RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Millisecond})

	// Given the proxy answers 502 twice, a read is retried and succeeds.
	flaky.failNext("", http.StatusBadGateway, http.StatusBadGateway)
	if _, err := c.PullRequestsForCommit(ctx, sha); err != nil {
		t.Fatalf("PullRequestsForCommit through two 502s: %v", err)
	}
	if n := obs.count("GET /repos/commits/{sha}/pull 502"); n != 2 {
		t.Fatalf("502s observed = %d, want 2: %v", n, obs.requests)
	}

	// Given the proxy says "429, retry after 120s", the client says until when, and sends
	// nothing more before then.
	flaky.failNext("120", http.StatusTooManyRequests)
	_, err = c.PullRequest(ctx, 1)
	at, limited := scm.RetryAt(err)
	if !limited || !at.Equal(now.Add(120*time.Second)) {
		t.Fatalf("PullRequest through a 429 = %v, want a RateLimitError retrying at +120s", err)
	}
	sent := flaky.requests()
	clockMu.Lock()
	now = now.Add(119 * time.Second)
	clockMu.Unlock()
	if _, err := c.SetStatus(ctx, sha, scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending}); err == nil {
		t.Fatal("SetStatus during the wait succeeded")
	} else if _, limited := scm.RetryAt(err); !limited || flaky.requests() != sent {
		t.Fatalf("SetStatus during the wait = %v, %d requests sent; want a refusal and none", err, flaky.requests()-sent)
	}
	clockMu.Lock()
	now = now.Add(time.Second)
	clockMu.Unlock()
	if posted, err := c.SetStatus(ctx, sha, scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending}); err != nil || !posted {
		t.Fatalf("SetStatus after the wait = %v, %v; want posted", posted, err)
	}
}
