package gitea

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// files reads every file of the repository at ref.
func files(t *testing.T, repo *giteatest.Repo, ref string) map[string]string {
	t.Helper()
	ctx := testContext(t)
	api, err := world.alice.API(ctx)
	check(t, err)
	tree, _, err := api.GetTrees(repo.Owner, repo.Name, sdk.ListTreeOptions{Ref: ref, Recursive: true})
	check(t, err)
	out := map[string]string{}
	for _, e := range tree.Entries {
		if e.Type != "blob" {
			continue
		}
		content, _, err := api.GetFile(repo.Owner, repo.Name, ref, e.Path)
		check(t, err)
		out[e.Path] = string(content)
	}
	return out
}

func TestProposeRevert_opensAPullRequestThatUndoesTheMerge(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	base := mergedChange(t, repo, co, "base", giteatest.Change{
		Write: map[string]string{"deploy/app.yaml": "image: app:v1\n", "deploy/old.yaml": "old\n", "notes.md": "n1\n"}, Message: "Set up the app",
	}, sdk.MergeStyleMerge)
	before := files(t, repo, *base.MergedCommitID)

	// Given a merged release that changed, added and deleted files, followed by an unrelated
	// commit on main.
	release := mergedChange(t, repo, co, "v2", giteatest.Change{
		Write:   map[string]string{"deploy/app.yaml": "image: app:v2\n", "deploy/new.yaml": "new\n"},
		Delete:  []string{"deploy/old.yaml"},
		Message: "Ship v2\n\nThe new image.",
	}, sdk.MergeStyleMerge)
	_, err = co.CommitAndPush(ctx, repo.DefaultBranch, giteatest.Change{Write: map[string]string{"notes.md": "n2\n"}, Message: "Notes"})
	check(t, err)

	// When sluice proposes its revert.
	c := newClient(t, repo, Options{})
	when := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p, err := c.ProposeRevert(ctx, scm.RevertRequest{
		MergeCommitSHA: *release.MergedCommitID, Base: repo.DefaultBranch,
		Author: &scm.Signature{Name: "sluice", Email: "sluice@example.com", When: when},
	})
	check(t, err)

	// Then a pull request from sluice/revert-<sha> holds one commit on main that restores the
	// release's files and keeps the later commit.
	if p.Existing || p.Number == 0 || p.Branch != "sluice/revert-"+(*release.MergedCommitID)[:12] || p.URL == "" {
		t.Fatalf("proposal = %+v", p)
	}
	want := map[string]string{"README.md": before["README.md"], "deploy/app.yaml": "image: app:v1\n", "deploy/old.yaml": "old\n", "notes.md": "n2\n"}
	if got := files(t, repo, p.CommitSHA); !reflect.DeepEqual(got, want) {
		t.Fatalf("files on the revert branch = %v\nwant %v", got, want)
	}
	api, err := world.alice.API(ctx)
	check(t, err)
	commit, _, err := api.GetSingleCommit(repo.Owner, repo.Name, p.CommitSHA)
	check(t, err)
	main, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	msg := commit.RepoCommit.Message
	if len(commit.Parents) != 1 || commit.Parents[0].SHA != main || !strings.HasPrefix(msg, `Revert "Merge pull request 'Ship v2'`) ||
		!strings.Contains(msg, "This reverts commit "+*release.MergedCommitID+", reversing") {
		t.Fatalf("revert commit: parents %v (main %s), message %q", commit.Parents, main, msg)
	}
	if a := commit.RepoCommit.Author; a.Name != "sluice" || a.Email != "sluice@example.com" || !strings.HasPrefix(a.Date, "2026-12-01T12:00:00") {
		t.Fatalf("revert author = %+v", a)
	}
	pr, err := c.PullRequest(ctx, p.Number)
	check(t, err)
	if pr.State != "open" || pr.HeadRef != p.Branch || pr.BaseRef != repo.DefaultBranch || !strings.HasPrefix(pr.Title, `Revert "Merge pull request 'Ship v2'`) || pr.HeadSHA != p.CommitSHA {
		t.Fatalf("revert pull request = %+v", pr)
	}

	// When it is asked again, the open pull request is returned and nothing is written.
	obs := newCountingObserver()
	again, err := newClient(t, repo, Options{Observer: obs}).ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: *release.MergedCommitID, Base: repo.DefaultBranch})
	check(t, err)
	if !again.Existing || again.Number != p.Number || again.CommitSHA != p.CommitSHA {
		t.Fatalf("second proposal = %+v, want the first one", again)
	}
	for op := range obs.requests {
		if !strings.HasPrefix(op, "GET ") {
			t.Fatalf("the second proposal sent %s", op)
		}
	}
}

func TestProposeRevert_ofTheBranchHead_andOfASquash(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	mergedChange(t, repo, co, "base", giteatest.Change{Write: map[string]string{"app.yaml": "v1\n"}, Message: "v1"}, sdk.MergeStyleMerge)
	squash := mergedChange(t, repo, co, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2\n", "extra.yaml": "x\n"}, Message: "Ship v2"}, sdk.MergeStyleSquash)

	// Given a squashed release still at the head of main, and a branch left by an attempt that
	// stopped before opening its pull request, when it is reverted, the branch is main's parent
	// tree on top of main, authored by the bot.
	main, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	_, err = co.CommitAndPush(ctx, "revert-v2", giteatest.Change{Write: map[string]string{"junk.yaml": "junk\n"}, Message: "Left over"})
	check(t, err)
	c := newClient(t, repo, Options{})
	p, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: *squash.MergedCommitID, Base: repo.DefaultBranch, Branch: "revert-v2", Title: "Back to v1", Body: "Rolled back by sluice."})
	check(t, err)
	got := files(t, repo, p.CommitSHA)
	if got["app.yaml"] != "v1\n" || got["extra.yaml"] != "" || got["junk.yaml"] != "" || p.Branch != "revert-v2" {
		t.Fatalf("revert of the head: branch %s, files %v", p.Branch, got)
	}
	api, err := world.alice.API(ctx)
	check(t, err)
	commit, _, err := api.GetSingleCommit(repo.Owner, repo.Name, p.CommitSHA)
	check(t, err)
	if a := commit.RepoCommit.Author; a.Name != world.sluice.Login || !strings.HasPrefix(commit.RepoCommit.Message, "Revert \"Ship v2") ||
		len(commit.Parents) != 1 || commit.Parents[0].SHA != main {
		t.Fatalf("revert commit by %+v, message %q, parents %d", a, commit.RepoCommit.Message, len(commit.Parents))
	}
	pr, err := c.PullRequest(ctx, p.Number)
	check(t, err)
	if pr.Title != "Back to v1" || pr.Author != world.sluice.Login {
		t.Fatalf("pull request = %+v", pr)
	}
}

func TestProposeRevert_conflictsWhereMainChangedTheSamePath(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	release := mergedChange(t, repo, co, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2\n", "b.yaml": "b\n"}, Message: "Ship v2"}, sdk.MergeStyleMerge)
	_, err = co.CommitAndPush(ctx, repo.DefaultBranch, giteatest.Change{Write: map[string]string{"app.yaml": "v3\n"}, Message: "Ship v3"})
	check(t, err)

	c := newClient(t, repo, Options{})
	_, err = c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: *release.MergedCommitID, Base: repo.DefaultBranch})
	var conflict *scm.ConflictError
	if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"app.yaml"}) {
		t.Fatalf("revert over a later change = %v, want a conflict on app.yaml", err)
	}
	if _, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: strings.Repeat("0", 40), Base: repo.DefaultBranch}); !scm.IsNotFound(err) {
		t.Fatalf("revert of an unknown commit = %v, want a NotFoundError", err)
	}
}
