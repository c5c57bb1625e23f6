package gitopsworld

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

func newRepo(t *testing.T) Repo {
	t.Helper()
	git, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = git.Close() })
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gh.CreateRepo("acme/shop", "main", map[string]string{"README.md": "shop\n"})
	repo, err := git.CreateRepo("shop.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	r := Repo{Git: repo, GitHub: gh, Name: "acme/shop"}
	first, err := repo.Commit("main", gitserver.Change{Message: "Add app", Files: map[string]string{"apps/app.yaml": "image: v1\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Mirror("main", first); err != nil {
		t.Fatal(err)
	}
	return r
}

// A merged pull request and its revert are the same commits in Git and on
// GitHub, and GitHub knows which pull request the merge closed.
func TestRepo_mergeAndRevert_lineUpGitAndGitHub(t *testing.T) {
	r := newRepo(t)
	number, merge, err := r.MergePullRequest("Bump app to v2", "dev", "lead", map[string]string{"apps/app.yaml": "image: v2\n"})
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := r.Git.Head("main"); head != merge || r.GitHub.Branch("acme/shop", "main") != merge {
		t.Fatalf("main is %s in Git and %s on GitHub, want the merge %s", head, r.GitHub.Branch("acme/shop", "main"), merge)
	}
	if msg, parents := r.GitHub.CommitInfo("acme/shop", merge); !strings.HasPrefix(msg, "Merge pull request #1 from acme/") || len(parents) != 2 {
		t.Errorf("GitHub's merge commit: %q with %d parents", msg, len(parents))
	}
	if pr := r.GitHub.PullRequests("acme/shop")[number]; pr.State != "closed" {
		t.Errorf("pull request #%d is %s, want closed (merged)", number, pr.State)
	}
	revert, err := r.Revert(merge)
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := r.GitHub.CommitInfo("acme/shop", revert); !strings.Contains(msg, "This reverts commit "+merge) {
		t.Errorf("GitHub's revert commit says %q", msg)
	}
}

// What someone pushes with git by hand is mirrored on GitHub, parents
// first, and a pull request whose branch the push brings is merged.
func TestRepo_mirrorPush_recordsHandPushesAndMergesTheirPullRequests(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test pushes with git: install it (apt-get install git): %v", err)
	}
	r := newRepo(t)
	pr, err := r.OpenPullRequestOn("bump-v3", "Bump app to v3", "dev", map[string]string{"apps/app.yaml": "image: v3\n"})
	if err != nil {
		t.Fatal(err)
	}
	before := r.GitHub.Branch("acme/shop", "main")
	if p, err := r.MirrorPush("main", "dev"); err != nil || p.Before != p.After || len(p.Mirrored) != 0 {
		t.Fatalf("nothing pushed yet: %+v, %v", p, err)
	}

	// When dev merges the branch by hand: a fast-forward, then a commit on top.
	dir := filepath.Join(t.TempDir(), "shop")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", r.Git.URL(), dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	git("fetch", "-q", "origin", "bump-v3")
	git("merge", "-q", "--ff-only", "origin/bump-v3")
	git("commit", "-q", "--allow-empty", "-m", "Note")
	git("push", "-q", "origin", "HEAD:main")

	// Then GitHub has both commits, parents first, and the pull request is merged.
	p, err := r.MirrorPush("main", "dev")
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.Git.Head("main")
	branch, _ := r.Git.Head("bump-v3")
	if p.Before != before || p.After != head || strings.Join(p.Mirrored, ",") != branch+","+head {
		t.Errorf("push = %+v, want %s..%s mirroring %s then %s", p, before, head, branch, head)
	}
	if len(p.Merged) != 1 || p.Merged[0] != pr.Number || r.GitHub.PullRequests("acme/shop")[pr.Number].State != "closed" {
		t.Errorf("merged = %v, want pull request #%d closed", p.Merged, pr.Number)
	}
	if r.GitHub.Branch("acme/shop", "main") != head {
		t.Errorf("GitHub's main is %s, want %s", r.GitHub.Branch("acme/shop", "main"), head)
	}
}
