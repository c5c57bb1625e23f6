package gitlab

import (
	"context"
	"sync"
	"testing"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/test/gitlabfake"
)

// The tests run against test/gitlabfake: GitLab cannot run here, so the fake stands in for it,
// with every request and response going through client-go's types and GitLab's commit-status
// state machine (see the fake's package documentation).

const testProject = "acme/app"

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

// world is one fake GitLab and its people:
//
//   - alice owns the group acme (and so every project in it);
//   - bob is a developer of acme/app, carol a reporter, dave a guest; erin has no role;
//   - sluice-bot is the developer whose token the clients under test use;
//   - the group acme/platform/releasers has frank as a direct member.
type world struct {
	fake  *gitlabfake.Server
	clock *manualClock
	bot   gitlabfake.User
	first string // the first commit of acme/app's main
}

func newWorld(t *testing.T) *world {
	t.Helper()
	clock := newClock()
	fake := gitlabfake.New(t)
	t.Cleanup(fake.Close)
	fake.SetClock(clock.Now)
	for _, name := range []string{"alice", "bob", "carol", "dave", "erin", "frank"} {
		fake.AddUser(name)
	}
	bot := fake.AddUser("sluice-bot")
	fake.AddGroup("acme/platform/releasers")
	fake.AddGroupMember("acme", "alice", gl.OwnerPermissions)
	_, first := fake.CreateProject(testProject, "main", map[string]string{"deploy/app.yaml": "image: app:v1\n", "README.md": "app\n"}, "alice")
	fake.AddProjectMember(testProject, "bob", gl.DeveloperPermissions)
	fake.AddProjectMember(testProject, "carol", gl.ReporterPermissions)
	fake.AddProjectMember(testProject, "dave", gl.GuestPermissions)
	fake.AddProjectMember(testProject, "sluice-bot", gl.DeveloperPermissions)
	fake.AddGroupMember("acme/platform/releasers", "frank", gl.DeveloperPermissions)
	return &world{fake: fake, clock: clock, bot: bot, first: first}
}

// client builds the client under test with the bot's token and fast retries.
func (w *world) client(t *testing.T, opts Options) *Client {
	t.Helper()
	if opts.Project == "" {
		opts.Project = testProject
	}
	if opts.BaseURL == "" {
		opts.BaseURL = w.fake.URL
	}
	if opts.Token == "" {
		opts.Token = w.bot.Token
	}
	if opts.Now == nil {
		opts.Now = w.clock.Now
	}
	if opts.RetryBaseDelay == 0 {
		opts.RetryBaseDelay, opts.RetryMaxDelay = time.Millisecond, 5*time.Millisecond
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mergedChange has bob push a branch changing files, open a merge request of it and alice merge
// it with method; it returns the merge request's iid and the commit main points at afterwards.
func (w *world) mergedChange(branch string, files map[string]string, title string, method gitlabfake.MergeMethod) (int64, string) {
	w.clock.Advance(time.Minute)
	w.fake.Push(testProject, branch, "bob", files, nil, title)
	iid := w.fake.OpenMergeRequest(testProject, "bob", branch, "main", title)
	w.clock.Advance(time.Minute)
	return iid, w.fake.MergeMergeRequest(testProject, iid, "alice", method)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// countingObserver counts requests by "op status" and remembers the last budget reported.
type countingObserver struct {
	mu        sync.Mutex
	requests  map[string]int
	remaining int
}

func newCountingObserver() *countingObserver {
	return &countingObserver{requests: map[string]int{}, remaining: -1}
}

func (o *countingObserver) Request(op, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[op+" "+status]++
}

func (o *countingObserver) RateLimit(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.remaining = n
}

func (o *countingObserver) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[key]
}
