package github

import (
	"sync"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestRoute(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for path, want := range map[string]string{
		"/repos/acme/app/statuses/" + sha:                       "/repos/statuses/{sha}",
		"/api/v3/repos/acme/app/commits/" + sha + "/statuses":   "/repos/commits/{sha}/statuses",
		"/repos/acme/app/commits/" + sha + "/pulls":             "/repos/commits/{sha}/pulls",
		"/repos/acme/app/pulls/42":                              "/repos/pulls/{n}",
		"/repos/acme/app/issues/42/events":                      "/repos/issues/{n}/events",
		"/repos/acme/app/collaborators/octocat/permission":      "/repos/collaborators/{name}/permission",
		"/orgs/acme/teams/release-managers/memberships/octocat": "/orgs/{name}/teams/{name}/memberships/{name}",
		"/repos/acme/app/git/ref/heads/main":                    "/repos/git/ref/heads/{name}",
		"/app/installations/1234/access_tokens":                 "/app/installations/{n}/access_tokens",
	} {
		if got := route(path); got != want {
			t.Errorf("route(%q) = %q, want %q", path, got, want)
		}
	}
}

// recordingObserver remembers what it was told.
type recordingObserver struct {
	mu        sync.Mutex
	requests  map[string]int
	remaining []int
}

func (o *recordingObserver) Request(op, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[op+" "+status]++
}

func (o *recordingObserver) RateLimit(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.remaining = append(o.remaining, n)
}

// Every request that reaches GitHub is told to the observer with its
// route and status, and the rate-limit budget GitHub reports with it.
func TestObserver_toldEveryRequestAndTheBudget(t *testing.T) {
	clock := newClock()
	fake, head := startFake(t, clock)
	obs := &recordingObserver{requests: map[string]int{}}
	c, err := New(Options{Owner: "acme", Repo: "app", BaseURL: fake.URL, Token: testToken, Now: clock.Now, Observer: obs, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	status := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "step 1/3 paused"}
	if _, err := c.SetStatus(t.Context(), head, status); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, want := range []string{"GET /repos/commits/{sha}/statuses 200", "POST /repos/statuses/{sha} 201"} {
		if obs.requests[want] != 1 {
			t.Errorf("observer saw %v, want %q once", obs.requests, want)
		}
	}
	if len(obs.remaining) != 2 || obs.remaining[1] >= obs.remaining[0] {
		t.Errorf("rate-limit budgets %v, want two, decreasing", obs.remaining)
	}
}
