package gitea

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// world is what every test shares: one real Gitea and its people.
//
//   - alice owns the organisation acme and is in its team "releasers";
//   - bob writes to the repositories (a collaborator with write access) and opens pull requests;
//   - carol may only read;
//   - sluice is the bot whose least-privilege token the clients under test use; it administers
//     each repository (Gitea shows other users' permissions only to administrators).
var world struct {
	server                    *giteatest.Server
	alice, bob, carol, sluice *giteatest.User
	org                       *giteatest.Org
	releasers                 *giteatest.Team
}

// sluiceScopes are the token scopes docs/gitops-gitea.md asks for.
var sluiceScopes = []string{"write:repository", "write:issue", "read:organization", "read:user"}

func TestMain(m *testing.M) {
	os.Exit(giteatest.Main(m, giteatest.Options{}, func(s *giteatest.Server) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		world.server = s
		var err error
		if world.alice, err = s.CreateUser(ctx, "alice"); err != nil {
			return err
		}
		if world.bob, err = s.CreateUser(ctx, "bob"); err != nil {
			return err
		}
		if world.carol, err = s.CreateUser(ctx, "carol"); err != nil {
			return err
		}
		if world.sluice, err = s.CreateUser(ctx, "sluice-bot", sluiceScopes...); err != nil {
			return err
		}
		if world.org, err = s.CreateOrg(ctx, world.alice, "acme"); err != nil {
			return err
		}
		world.releasers, err = world.org.CreateTeam(ctx, "releasers", sdk.AccessModeWrite, true, world.alice)
		return err
	}))
}

var repoCount atomic.Int32

// newRepo creates a repository of acme for one test, with bob as a writer, carol as a reader
// and the sluice bot as an administrator.
func newRepo(t *testing.T) *giteatest.Repo {
	t.Helper()
	ctx := testContext(t)
	name := fmt.Sprintf("app-%d", repoCount.Add(1))
	repo, err := world.server.CreateRepo(ctx, world.alice, world.org.Name, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		u *giteatest.User
		p sdk.AccessMode
	}{{world.bob, sdk.AccessModeWrite}, {world.carol, sdk.AccessModeRead}, {world.sluice, sdk.AccessModeAdmin}} {
		if err := repo.AddCollaborator(ctx, world.alice, c.u, c.p); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// newClient builds the client under test for repo with the bot's token.
func newClient(t *testing.T, repo *giteatest.Repo, opts Options) *Client {
	t.Helper()
	opts.Owner, opts.Repo = repo.Owner, repo.Name
	if opts.BaseURL == "" {
		opts.BaseURL = world.server.URL
	}
	if opts.Token == "" {
		opts.Token = world.sluice.Token
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mergedChange has bob push a branch with ch, open a pull request of it and alice merge it
// with style; it returns the merged pull request.
func mergedChange(t *testing.T, repo *giteatest.Repo, co *giteatest.Checkout, branch string, ch giteatest.Change, style sdk.MergeStyle) *sdk.PullRequest {
	t.Helper()
	ctx := testContext(t)
	check(t, co.Switch(repo.DefaultBranch))
	check(t, co.Pull(ctx))
	_, err := co.CommitAndPush(ctx, branch, ch)
	check(t, err)
	title, _, _ := strings.Cut(ch.Message, "\n")
	pr, err := repo.OpenPullRequest(ctx, world.bob, branch, repo.DefaultBranch, title)
	check(t, err)
	merged, err := repo.MergePullRequest(ctx, world.alice, pr.Index, style)
	check(t, err)
	check(t, co.Switch(repo.DefaultBranch))
	check(t, co.Pull(ctx))
	return merged
}

// countingObserver counts requests by "op status".
type countingObserver struct {
	mu       sync.Mutex
	requests map[string]int
}

func newCountingObserver() *countingObserver {
	return &countingObserver{requests: map[string]int{}}
}

func (o *countingObserver) Request(op, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[op+" "+status]++
}

func (o *countingObserver) RateLimit(int) {}

func (o *countingObserver) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[key]
}
