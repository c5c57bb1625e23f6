package github

import (
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/githubfake"
)

const (
	testRepo  = "acme/app"
	testToken = "ghp_test"
)

// manualClock is a clock the test moves; the client and the fake share it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *manualClock {
	return &manualClock{now: time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startFake starts a fake GitHub with repository acme/app (branch main, one commit) and a
// token for user "sluice-bot".
func startFake(t *testing.T, clock *manualClock) (*githubfake.Server, string) {
	t.Helper()
	fake, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	fake.SetClock(clock.Now)
	fake.AddToken(testToken, "sluice-bot")
	first := fake.CreateRepo(testRepo, "main", map[string]string{"deploy/app.yaml": "image: app:v1\n", "README.md": "app\n"})
	return fake, first
}

// newTestClient builds a token client of acme/app against the fake, with fast retries.
func newTestClient(t *testing.T, fake *githubfake.Server, clock *manualClock) *Client {
	t.Helper()
	c, err := New(Options{
		Owner: "acme", Repo: "app", BaseURL: fake.URL, Token: testToken, Now: clock.Now,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
