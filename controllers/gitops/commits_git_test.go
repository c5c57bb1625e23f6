package gitops

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The release's commits, read from a real repository: the first-parent
// commits after the base that changed the tool's path, the head left out.
func TestReleaseCommits_fromARealRepository(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	repo, err := srv.CreateRepo("shop.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	commit := func(branch, msg, path, content string) string {
		t.Helper()
		sha, err := repo.Commit(branch, gitserver.Change{Message: msg, Files: map[string]string{path: content}})
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	base := commit("main", "root", "apps/app.yaml", "v1\n")
	if err := repo.Branch("pr", base); err != nil {
		t.Fatal(err)
	}
	commit("pr", "side", "apps/app.yaml", "v2\n")
	merge, err := repo.Merge("main", "pr", gitserver.MergeOptions{Message: "Merge pull request #1"})
	if err != nil {
		t.Fatal(err)
	}
	docs := commit("main", "docs", "docs/a.md", "a\n")
	app := commit("main", "app", "apps/app.yaml", "v3\n")
	head := commit("main", "other docs", "docs/b.md", "b\n")

	reader, err := git.New(git.Options{URL: srv.URL("shop.git"), Branch: "main", AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	s := &scope{c: &clients{git: reader}}
	r := &Reconciler{}
	for _, tt := range []struct {
		name, base, head, path string
		want                   []string
	}{
		{"the app's commits under an unrelated head", base, head, "./apps", []string{merge, app}},
		{"no path: every commit", base, head, "", []string{merge, docs, app}},
		{"the head itself is the release", base, app, "./apps", []string{merge}},
		{"nothing new", head, head, "./apps", nil},
		{"first sight", "", head, "./apps", nil},
		{"base not on the branch", "0123456789abcdef0123456789abcdef01234567", head, "./apps", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.releaseCommits(ctx, s, tt.base, tt.head, tt.path); !slices.Equal(got, tt.want) {
				t.Errorf("releaseCommits = %v, want %v", got, tt.want)
			}
		})
	}
}
