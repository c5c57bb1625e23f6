package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// mergedChange merges a pull request changing the image and adding a file; it returns the
// merge commit and the main branch's head before it.
func mergedChange(t *testing.T, fake *githubfake.Server) (merge, before string) {
	t.Helper()
	before = fake.Branch(testRepo, "main")
	fake.Commit(testRepo, "bump", "main", "Bump app to v2", map[string]string{
		"deploy/app.yaml": "image: app:v2\n", "deploy/extra.yaml": "new\n",
	}, githubfake.Signature{Name: "bob", Email: "bob@example.com"})
	number := fake.OpenPullRequest(testRepo, "bump", "main", "Bump app to v2", "bob")
	return fake.MergePullRequest(testRepo, number, "alice"), before
}

func TestProposeRevert_mergeAtHead(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	merge, before := mergedChange(t, fake)
	ctx := context.Background()

	proposal, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	// Then a branch holds one commit on top of main whose files are main's before the merge.
	if proposal.Existing || proposal.Branch != "sluice/revert-"+merge[:12] || fake.Branch(testRepo, proposal.Branch) != proposal.CommitSHA {
		t.Fatalf("proposal = %+v, branch at %s", proposal, fake.Branch(testRepo, proposal.Branch))
	}
	message, parents := fake.CommitInfo(testRepo, proposal.CommitSHA)
	if len(parents) != 1 || parents[0] != merge {
		t.Fatalf("revert parents = %v, want [%s]", parents, merge)
	}
	if !strings.Contains(message, "This reverts commit "+merge) || !strings.HasPrefix(message, `Revert "Merge pull request #1`) {
		t.Fatalf("revert message = %q", message)
	}
	if got, want := fake.Files(testRepo, proposal.CommitSHA), fake.Files(testRepo, before); !equalFiles(got, want) {
		t.Fatalf("reverted files = %v, want %v", got, want)
	}
	// And a pull request of it into main is open; main itself is untouched.
	pr := fake.PullRequests(testRepo)[proposal.Number]
	if pr.State != "open" || pr.Head != proposal.Branch || pr.Base != "main" || !strings.Contains(pr.Body, merge) {
		t.Fatalf("revert pull request = %+v", pr)
	}
	if fake.Branch(testRepo, "main") != merge {
		t.Fatal("main moved")
	}
	// Proposing again returns the open pull request and writes nothing.
	commits := fake.Count("git/create-commit")
	again, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	if err != nil || !again.Existing || again.Number != proposal.Number || again.CommitSHA != proposal.CommitSHA {
		t.Fatalf("second proposal = %+v, %v", again, err)
	}
	if fake.Count("git/create-commit") != commits || fake.Count("pulls/create") != 1 {
		t.Fatal("the second proposal wrote to the repository")
	}
}

func TestProposeRevert_baseMovedOn(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	merge, _ := mergedChange(t, fake)
	// A later, unrelated change lands on main.
	fake.Commit(testRepo, "main", "main", "Docs", map[string]string{"README.md": "app, documented\n"}, githubfake.Signature{Name: "ann"})

	proposal, err := c.ProposeRevert(context.Background(), scm.RevertRequest{
		MergeCommitSHA: merge, Base: "main", Branch: "revert-bump", Title: "Roll back v2",
		Author: &scm.Signature{Name: "sluice", Email: "sluice@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	files := fake.Files(testRepo, proposal.CommitSHA)
	want := map[string]string{"deploy/app.yaml": "image: app:v1\n", "README.md": "app, documented\n"}
	if !equalFiles(files, want) {
		t.Fatalf("reverted files = %v, want %v (the change undone, the later docs kept)", files, want)
	}
	if pr := fake.PullRequests(testRepo)[proposal.Number]; pr.Title != "Roll back v2" || pr.Head != "revert-bump" {
		t.Fatalf("pull request = %+v", pr)
	}
}

func TestProposeRevert_conflict(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	merge, _ := mergedChange(t, fake)
	fake.Commit(testRepo, "main", "main", "Bump app to v3", map[string]string{"deploy/app.yaml": "image: app:v3\n"}, githubfake.Signature{Name: "ann"})

	_, err := c.ProposeRevert(context.Background(), scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	var conflict *scm.ConflictError
	if !errors.As(err, &conflict) || len(conflict.Paths) != 1 || conflict.Paths[0] != "deploy/app.yaml" {
		t.Fatalf("error = %v, want a conflict on deploy/app.yaml", err)
	}
	if fake.Count("git/create-ref") != 0 || fake.Count("pulls/create") != 0 {
		t.Fatal("a conflicting revert wrote a branch or a pull request")
	}
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestProposeRevert_leftoverBranchIsMoved(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	merge, before := mergedChange(t, fake)
	// An earlier attempt stopped after creating the branch, before opening the pull request.
	branch := "sluice/revert-" + merge[:12]
	leftover := fake.Commit(testRepo, branch, "main", "half-done", map[string]string{"junk.txt": "x\n"}, githubfake.Signature{Name: "sluice"})

	proposal, err := c.ProposeRevert(context.Background(), scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if proposal.Existing || proposal.Branch != branch || proposal.CommitSHA == leftover {
		t.Fatalf("proposal = %+v", proposal)
	}
	if got := fake.Branch(testRepo, branch); got != proposal.CommitSHA {
		t.Fatalf("branch at %s, want the new revert commit %s", got, proposal.CommitSHA)
	}
	if fake.Count("git/update-ref") != 1 {
		t.Fatal("the leftover branch was not moved with update-ref")
	}
	if got, want := fake.Files(testRepo, proposal.CommitSHA), fake.Files(testRepo, before); !equalFiles(got, want) {
		t.Fatalf("reverted files = %v, want %v", got, want)
	}
}
