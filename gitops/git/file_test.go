package git_test

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// A file is read from a commit of the branch; a path without a file, or a
// directory, is ErrFileNotFound.
func TestReader_file_readsAFileOfACommit(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("file.git", "main"))(t)
	first := must(repo.Commit("main", gitserver.Change{Message: "root", Files: map[string]string{".github/CODEOWNERS": "/apps/ @acme/sre\n"}}))(t)
	must(repo.Commit("main", gitserver.Change{Message: "owners", Files: map[string]string{".github/CODEOWNERS": "/apps/ @alice\n"}}))(t)
	r := newReader(t, s, "file.git", "main", git.Options{})
	head := must(r.Fetch(ctx(t)))(t)
	if got := string(must(r.File(ctx(t), head.SHA, ".github/CODEOWNERS"))(t)); got != "/apps/ @alice\n" {
		t.Errorf("CODEOWNERS at the head = %q", got)
	}
	if got := string(must(r.File(ctx(t), first, "/.github/CODEOWNERS"))(t)); got != "/apps/ @acme/sre\n" {
		t.Errorf("CODEOWNERS at the first commit = %q", got)
	}
	for _, p := range []string{"CODEOWNERS", ".github", "docs/CODEOWNERS"} {
		if _, err := r.File(ctx(t), head.SHA, p); !errors.Is(err, git.ErrFileNotFound) {
			t.Errorf("File(%q) = %v, want ErrFileNotFound", p, err)
		}
	}
}

// A merge brought itself and the commits of the merged branch; a commit on
// the first-parent line brought itself alone.
func TestReader_brought_listsTheCommitsAMergeBrought(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("brought.git", "main"))(t)
	must(repo.Commit("main", gitserver.Change{Message: "root", Files: map[string]string{"apps/a.yaml": "v1\n"}}))(t)
	head := must(repo.Head("main"))(t)
	if err := repo.Branch("pr", head); err != nil {
		t.Fatal(err)
	}
	bob := &object.Signature{Name: "Bob", Email: "bob@example.com"}
	carol := &object.Signature{Name: "Carol", Email: "carol@example.com"}
	one := must(repo.Commit("pr", gitserver.Change{Message: "one", Author: bob, Files: map[string]string{"apps/a.yaml": "v2\n"}}))(t)
	two := must(repo.Commit("pr", gitserver.Change{Message: "two", Author: carol, Files: map[string]string{"apps/b.yaml": "v1\n"}}))(t)
	direct := must(repo.Commit("main", gitserver.Change{Message: "direct", Files: map[string]string{"docs/x.md": "x\n"}}))(t)
	merge := must(repo.Merge("main", "pr", gitserver.MergeOptions{Message: "Merge pull request #7"}))(t)
	r := newReader(t, s, "brought.git", "main", git.Options{})
	must(r.Fetch(ctx(t)))(t)

	got := must(r.Brought(ctx(t), merge))(t)
	var shas, emails []string
	for _, c := range got {
		shas, emails = append(shas, c.SHA), append(emails, c.Author.Email)
	}
	if len(got) != 3 || shas[0] != one || shas[1] != two || shas[2] != merge || emails[0] != "bob@example.com" || emails[1] != "carol@example.com" {
		t.Errorf("Brought(merge) = %v by %v, want %s, %s and the merge", shas, emails, one, two)
	}
	if got := must(r.Brought(ctx(t), direct))(t); len(got) != 1 || got[0].SHA != direct {
		t.Errorf("Brought(direct) = %+v, want the commit alone", got)
	}
}
