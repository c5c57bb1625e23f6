package gitops

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The code owners of the manifest path and the authors of the release,
// read from a real repository: CODEOWNERS at the branch head (the first of
// the known places), its last matching rule for the directory the tool
// applies; the authors of the commits a merge brought and of a direct
// commit, not the merge's own.
func TestObserveCodeOwnersAndGitAuthors_fromARealRepository(t *testing.T) {
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
	bob := &object.Signature{Name: "Bob", Email: "bob@example.com"}
	lead := &object.Signature{Name: "Lead", Email: "lead@example.com"}
	root, err := repo.Commit("main", gitserver.Change{Message: "root", Files: map[string]string{
		"apps/checkout/app.yaml": "v1\n",
		".github/CODEOWNERS":     "* @acme/everyone\n/apps/ @acme/platform\n/apps/checkout/ @acme/payments @alice\n",
		"docs/CODEOWNERS":        "* @not-read\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Branch("pr", root); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit("pr", gitserver.Change{Message: "bump", Author: bob, Files: map[string]string{"apps/checkout/app.yaml": "v2\n"}}); err != nil {
		t.Fatal(err)
	}
	merge, err := repo.Merge("main", "pr", gitserver.MergeOptions{Message: "Merge pull request #1", Author: lead})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := repo.Commit("main", gitserver.Change{Message: "tweak", Files: map[string]string{"apps/checkout/app.yaml": "v3\n"}})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := git.New(git.Options{URL: srv.URL("shop.git"), Branch: "main", AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	head, err := reader.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{}
	s := &scope{c: &clients{git: reader}, head: head.SHA, policy: Policy{Required: []RequiredSet{{CodeOwners: true}}}}
	s.gg = &gitopsv1alpha1.GitGate{Spec: gitopsv1alpha1.GitGateSpec{Git: gitopsv1alpha1.GitSource{Branch: "main"}}}

	for _, tt := range []struct {
		path string
		want []string
	}{
		{"./apps/checkout", []string{"@acme/payments", "@alice"}},
		{"./apps", []string{"@acme/platform"}},
		{"", []string{"@acme/everyone"}},
	} {
		o := Observation{Rollout: RolloutView{InRelease: true, Paused: true}}
		r.observeCodeOwners(ctx, s, &o, tt.path)
		if o.CodeOwners.File != ".github/CODEOWNERS" || !slices.Equal(o.CodeOwners.Owners, tt.want) || o.CodeOwners.Problem != "" {
			t.Errorf("code owners of %q = %+v, want %v from .github/CODEOWNERS", tt.path, o.CodeOwners, tt.want)
		}
	}

	o := Observation{Rollout: RolloutView{InRelease: true}, Revision: direct, Commits: []string{merge}}
	r.observeGitAuthors(ctx, s, &o)
	var emails []string
	for _, c := range o.CommitAuthors {
		emails = append(emails, c.Email)
	}
	if want := []string{gitserver.TestAuthor().Email, "bob@example.com"}; !slices.Equal(emails, want) {
		t.Errorf("authors = %v, want %v (not the merge's lead@example.com)", emails, want)
	}
}
