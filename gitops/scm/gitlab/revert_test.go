package gitlab

import (
	"errors"
	"strings"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/gitlabfake"
)

func TestProposeRevert_opensAMergeRequestUndoingTheMerge_once(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	_, merge := w.mergedChange("feature", map[string]string{"deploy/app.yaml": "image: app:v2\n", "deploy/new.yaml": "kind: ConfigMap\n"}, "Ship v2", gitlabfake.MergeCommit)
	// A later, unrelated change on main stays.
	w.fake.Push(testProject, "main", "alice", map[string]string{"README.md": "app, documented\n"}, nil, "Document")

	got, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	check(t, err)
	if got.Existing || got.Number == 0 || got.URL == "" || got.Branch != "sluice/revert-"+merge[:12] || got.CommitSHA == "" {
		t.Fatalf("proposal = %+v", got)
	}
	files := w.fake.CommitFiles(testProject, got.CommitSHA)
	if files["deploy/app.yaml"] != "image: app:v1\n" || files["README.md"] != "app, documented\n" {
		t.Fatalf("reverted files = %v; want app.yaml back to v1 and the README kept", files)
	}
	if _, ok := files["deploy/new.yaml"]; ok {
		t.Fatalf("the added file survived the revert: %v", files)
	}
	if parents := w.fake.CommitParents(testProject, got.CommitSHA); len(parents) != 1 || parents[0] != w.fake.BranchHead(testProject, "main") {
		t.Fatalf("revert commit parents = %v; want main's head", parents)
	}
	mrs := w.fake.MergeRequests(testProject)
	last := mrs[len(mrs)-1]
	if last.IID != int64(got.Number) || last.SourceBranch != got.Branch || last.TargetBranch != "main" || last.State != "opened" ||
		last.Title != `Revert "Merge branch 'feature' into 'main'"` || !strings.Contains(last.Description, merge) || last.Author != "sluice-bot" {
		t.Fatalf("merge request = %+v", last)
	}

	// When asked again, it returns the open merge request and writes nothing.
	before := len(w.fake.Requests())
	again, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	check(t, err)
	if !again.Existing || again.Number != got.Number || again.CommitSHA != got.CommitSHA {
		t.Fatalf("second proposal = %+v; want the existing !%d", again, got.Number)
	}
	for _, r := range w.fake.Requests()[before:] {
		if r.Method != "GET" {
			t.Fatalf("the second proposal wrote: %s %s", r.Method, r.Path)
		}
	}
}

func TestProposeRevert_replacesAStaleBranch_andNamesTheMergeRequest(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	_, squash := w.mergedChange("feature", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, "Ship v2", gitlabfake.SquashMerge)
	// Given a branch left by an attempt that stopped before opening its merge request.
	w.fake.Push(testProject, "rollback", "bob", map[string]string{"junk": "x"}, nil, "junk")
	got, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: squash, Base: "main", Branch: "rollback", Title: "Roll back v2", Body: "Rolled back by sluice."})
	check(t, err)
	files := w.fake.CommitFiles(testProject, got.CommitSHA)
	if _, junk := files["junk"]; junk || files["deploy/app.yaml"] != "image: app:v1\n" {
		t.Fatalf("revert branch files = %v; want the base with the change undone", files)
	}
	mrs := w.fake.MergeRequests(testProject)
	if last := mrs[len(mrs)-1]; last.Title != "Roll back v2" || last.Description != "Rolled back by sluice." {
		t.Fatalf("merge request = %+v", last)
	}
}

func TestProposeRevert_conflictsAndNothingToUndo(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	_, merge := w.mergedChange("feature", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, "Ship v2", gitlabfake.MergeCommit)
	w.fake.Push(testProject, "main", "alice", map[string]string{"deploy/app.yaml": "image: app:v3\n"}, nil, "Ship v3")

	_, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"})
	var conflict *scm.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("revert over a later change = %v; want a ConflictError", err)
	}
	if head := w.fake.BranchHead(testProject, "sluice/revert-"+merge[:12]); head != "" {
		t.Fatalf("the branch of a failed revert is left at %s", head)
	}
	// Undone by hand already: nothing to revert.
	w.fake.Push(testProject, "main", "alice", map[string]string{"deploy/app.yaml": "image: app:v1\n"}, nil, "Back to v1")
	if _, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"}); err == nil || !strings.Contains(err.Error(), "already undone") {
		t.Fatalf("revert of an undone change = %v; want 'already undone'", err)
	}
	if _, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: strings.Repeat("a", 40), Base: "main"}); !scm.IsNotFound(err) {
		t.Fatalf("revert of an unknown commit = %v; want a NotFoundError", err)
	}
	if _, err := c.ProposeRevert(ctx, scm.RevertRequest{Base: "main"}); err == nil {
		t.Fatal("a revert without a commit was accepted")
	}
}

func TestProposeRevert_needsDeveloperAccess(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	_, merge := w.mergedChange("feature", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, "Ship v2", gitlabfake.MergeCommit)
	reporter := w.fake.AddUser("reporter-bot")
	w.fake.AddProjectMember(testProject, "reporter-bot", gl.ReporterPermissions)
	c := w.client(t, Options{Token: reporter.Token})
	if _, err := c.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: merge, Base: "main"}); !scm.IsUnauthorized(err) {
		t.Fatalf("revert by a reporter = %v; want an UnauthorizedError", err)
	}
}
