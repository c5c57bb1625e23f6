package git_test

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{"./apps": "apps", "apps/": "apps", "/apps/x.yaml": "apps/x.yaml", ".": "", "": "", "./": ""} {
		if got := git.CleanPath(in); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// The commits that touch the workload's directory are told apart from the
// commits to other paths, and a merge is judged against its first parent.
func TestReader_touches_tellsWhichCommitsChangedAPath(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("paths.git", "main"))(t)
	root := must(repo.Commit("main", gitserver.Change{Message: "root", Files: map[string]string{"apps/app.yaml": "v1\n", "docs/a.md": "a\n"}}))(t)
	app := must(repo.Commit("main", gitserver.Change{Message: "app", Files: map[string]string{"apps/app.yaml": "v2\n"}}))(t)
	docs := must(repo.Commit("main", gitserver.Change{Message: "docs", Files: map[string]string{"docs/a.md": "b\n"}}))(t)
	if err := repo.Branch("feature", docs); err != nil {
		t.Fatal(err)
	}
	must(repo.Commit("feature", gitserver.Change{Message: "side", Files: map[string]string{"apps/app.yaml": "v3\n"}}))(t)
	merge := must(repo.Merge("main", "feature", gitserver.MergeOptions{Message: "Merge feature"}))(t)
	r := newReader(t, s, "paths.git", "main", git.Options{})
	must(r.Fetch(ctx(t)))(t)
	for _, tt := range []struct {
		sha   string
		paths []string
		want  bool
	}{
		{root, []string{"./apps"}, true},
		{app, []string{"./apps"}, true},
		{app, []string{"apps/app.yaml"}, true},
		{app, []string{"docs"}, false},
		{docs, []string{"./apps"}, false},
		{docs, nil, true},
		{merge, []string{"./apps/"}, true},
		{merge, []string{"docs"}, false},
		{app, []string{"docs", "apps"}, true},
		{app, []string{"nowhere"}, false},
	} {
		if got := must(r.Touches(ctx(t), tt.sha, tt.paths))(t); got != tt.want {
			t.Errorf("Touches(%s, %v) = %v, want %v", tt.sha[:8], tt.paths, got, tt.want)
		}
	}
}

// The commit that brought a value is found through later commits that keep
// it and through the merge that brought it from a pull request's branch.
func TestReader_introduced_findsTheCommitThatBroughtAValue(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("intro.git", "main"))(t)
	must(repo.Commit("main", gitserver.Change{Message: "root", Files: map[string]string{"apps/ro.yaml": "kind: Rollout\n"}}))(t)
	jane := &object.Signature{Name: "Jane", Email: "jane@example.com"}
	head := must(repo.Head("main"))(t)
	if err := repo.Branch("pr", head); err != nil {
		t.Fatal(err)
	}
	added := must(repo.Commit("pr", gitserver.Change{Message: "approve", Author: jane,
		Files: map[string]string{"apps/ro.yaml": "kind: Rollout\n# sluice.dev/approve: step=2,revision=abcdef1\n"}}))(t)
	merge := must(repo.Merge("main", "pr", gitserver.MergeOptions{Message: "Merge pull request #7"}))(t)
	must(repo.Commit("main", gitserver.Change{Message: "later", Files: map[string]string{"docs/x.md": "x\n"}}))(t)
	r := newReader(t, s, "intro.git", "main", git.Options{})
	must(r.Fetch(ctx(t)))(t)
	a := must(r.Introduced(ctx(t), "./apps", "revision=abcdef1"))(t)
	if a.SHA != added || a.Via != merge || a.Author.Email != "jane@example.com" {
		t.Errorf("Introduced = %s via %s by %s, want %s via %s by jane@example.com", a.SHA, a.Via, a.Author.Email, added, merge)
	}
	if _, err := r.Introduced(ctx(t), "./apps", "revision=0000000"); !errors.Is(err, git.ErrCommitNotFound) {
		t.Errorf("Introduced of a value nowhere: %v, want ErrCommitNotFound", err)
	}
	if _, err := r.Introduced(ctx(t), "docs", "revision=abcdef1"); !errors.Is(err, git.ErrCommitNotFound) {
		t.Errorf("Introduced under another path: %v, want ErrCommitNotFound", err)
	}
}
