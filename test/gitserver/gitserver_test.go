package gitserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// These tests hold the helpers to what git itself does: the system git
// checks the objects they write, reverts the same commits, and verifies
// the SSH signatures.

// runGit runs the system git with a clean configuration.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCmd(t, dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func gitCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Git", "GIT_AUTHOR_EMAIL=git@example.com",
		"GIT_COMMITTER_NAME=Git", "GIT_COMMITTER_EMAIL=git@example.com",
		"GIT_AUTHOR_DATE=2026-02-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-02-01T10:00:00Z")
	return cmd
}

// must fails the test on an error: must(f())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func startServer(t *testing.T, o Options) *Server {
	t.Helper()
	s := must(Start(o))(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestRepo_objectsPassGitFsck(t *testing.T) {
	s := startServer(t, Options{})
	r := must(s.CreateRepo("app.git", "main"))(t)
	// Names that sort differently as files and as directories.
	must(r.Commit("main", Change{Message: "init", Files: map[string]string{
		"a.txt": "1", "a/b.txt": "2", "a-b": "3", "a0/c": "4", "deploy/app/deployment.yaml": "image: v1\n",
	}}))(t)
	must(r.Commit("main", Change{Message: "remove", Delete: []string{"a-b"}}))(t)
	base := must(r.Head("main"))(t)
	if err := r.Branch("feature", base); err != nil {
		t.Fatal(err)
	}
	must(r.Commit("feature", Change{Message: "feature", Files: map[string]string{"a/new.txt": "5"}}))(t)
	must(r.Commit("main", Change{Message: "main", Files: map[string]string{"a.txt": "6"}}))(t)
	merge := must(r.Merge("main", "feature", MergeOptions{}))(t)
	must(r.Revert("main", merge, RevertOptions{Mainline: 1}))(t)

	runGit(t, r.Dir(), "fsck", "--strict", "--no-dangling")
	log := runGit(t, r.Dir(), "log", "--format=%s|%p", "main")
	want := []string{
		`Revert "Merge branch 'feature'"`,
		"Merge branch 'feature'",
		"main", "feature", "remove", "init",
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != len(want) {
		t.Fatalf("git log:\n%s", log)
	}
	for i, w := range want {
		if subject, _, _ := strings.Cut(lines[i], "|"); subject != w {
			t.Errorf("commit %d: subject %q, want %q", i, subject, w)
		}
	}
	if out, err := gitCmd(t, r.Dir(), "show", "main:a/new.txt").CombinedOutput(); err == nil {
		t.Errorf("a/new.txt is still there after reverting the merge that added it: %q", out)
	}
	if got := runGit(t, r.Dir(), "show", "main:a.txt"); got != "6" {
		t.Errorf("a.txt after the revert of the merge: %q, want 6 (main's change stays)", got)
	}
}

func TestRepo_revertWritesWhatGitRevertWrites(t *testing.T) {
	s := startServer(t, Options{})
	r := must(s.CreateRepo("app.git", "main"))(t)
	must(r.Commit("main", Change{Message: "init", Files: map[string]string{"app.yaml": "image: v1\n", "README": "x"}}))(t)
	change := must(r.Commit("main", Change{Message: "Roll out v2\n\nBody.", Files: map[string]string{"app.yaml": "image: v2\n", "new.txt": "n"}}))(t)
	must(r.Commit("main", Change{Message: "unrelated", Files: map[string]string{"README": "y"}}))(t)
	if err := r.Branch("feature", change); err != nil {
		t.Fatal(err)
	}
	must(r.Commit("feature", Change{Message: "side", Files: map[string]string{"side.txt": "s"}}))(t)
	merge := must(r.Merge("main", "feature", MergeOptions{Message: "Merge pull request #7 from team/feature\n\nSide work"}))(t)

	for _, tc := range []struct {
		name     string
		sha      string
		mainline int
	}{
		{name: "commit", sha: change},
		{name: "merge commit", sha: merge, mainline: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := must(r.Head("main"))(t)
			branch := "revert-" + strings.ReplaceAll(tc.name, " ", "-")
			if err := r.Branch(branch, head); err != nil {
				t.Fatal(err)
			}
			ours := must(r.Revert(branch, tc.sha, RevertOptions{Mainline: tc.mainline}))(t)
			oursCommit := must(r.CommitObject(ours))(t)

			work := filepath.Join(t.TempDir(), "w")
			runGit(t, "", "clone", "-q", "--branch", "main", r.Dir(), work)
			args := []string{"revert", "--no-edit"}
			if tc.mainline > 0 {
				args = append(args, "-m", "1")
			}
			runGit(t, work, append(args, tc.sha)...)
			gitMsg := runGit(t, work, "log", "-1", "--format=%B")
			gitTree := strings.TrimSpace(runGit(t, work, "log", "-1", "--format=%T"))

			// git log %B adds a newline after the message.
			if want := strings.TrimSuffix(gitMsg, "\n"); oursCommit.Message != want {
				t.Errorf("message:\n%q\ngit revert wrote:\n%q", oursCommit.Message, want)
			}
			if oursCommit.TreeHash.String() != gitTree {
				t.Errorf("tree %s, git revert made %s", oursCommit.TreeHash, gitTree)
			}
		})
	}
}

func TestServer_basicAuth_refusesOtherCredentials(t *testing.T) {
	s := startServer(t, Options{Username: "sluice", Password: "s3cret"})
	r := must(s.CreateRepo("app.git", "main"))(t)
	head := must(r.Commit("main", Change{Message: "init", Files: map[string]string{"f": "1"}}))(t)
	withCreds := strings.Replace(s.URL("app.git"), "http://", "http://sluice:s3cret@", 1)
	if out := runGit(t, "", "ls-remote", withCreds, "main"); !strings.HasPrefix(out, head) {
		t.Errorf("ls-remote with the credentials: %q, want %s", out, head)
	}
	for _, url := range []string{
		s.URL("app.git"),
		strings.Replace(s.URL("app.git"), "http://", "http://sluice:wrong@", 1),
	} {
		out, err := gitCmd(t, "", "ls-remote", url).CombinedOutput()
		if err == nil {
			t.Errorf("ls-remote %s worked: %s", url, out)
		}
	}
	reqs := s.Requests()
	if len(reqs) < 3 {
		t.Fatalf("requests: %+v", reqs)
	}
	if reqs[0].Status != 401 || reqs[1].Status != 200 || reqs[1].User != "sluice" {
		t.Errorf("first requests: %+v", reqs[:2])
	}
}

func TestServer_recordsWhatAFetchTransfers(t *testing.T) {
	s := startServer(t, Options{})
	r := must(s.CreateRepo("app.git", "main"))(t)
	must(r.Commit("main", Change{Message: "one", Files: map[string]string{"a/f": "1"}}))(t)
	must(r.Commit("main", Change{Message: "two", Files: map[string]string{"a/f": "2"}}))(t)
	work := filepath.Join(t.TempDir(), "w")
	runGit(t, "", "clone", "-q", s.URL("app.git"), work)
	// Two commits, each with a root tree, a tree a/ and a blob.
	assertPack(t, s.Requests(), 8)

	s.ResetRequests()
	must(r.Commit("main", Change{Message: "three", Files: map[string]string{"b": "3"}}))(t)
	runGit(t, work, "pull", "-q", "--ff-only")
	// A commit, its root tree and the blob b: a/ is unchanged.
	assertPack(t, s.Requests(), 3)
}

// assertPack checks that reqs hold one upload-pack request, sent a pack of
// n objects.
func assertPack(t *testing.T, reqs []Request, n int) {
	t.Helper()
	var packs []Request
	for _, q := range reqs {
		if strings.HasSuffix(q.Path, "/git-upload-pack") {
			packs = append(packs, q)
		}
	}
	if len(packs) != 1 || packs[0].Objects != n || packs[0].Wants != 1 {
		t.Errorf("upload-pack requests: %+v, want one sending %d objects", packs, n)
	}
}

func TestSSHSigner_signaturesVerifyWithGit(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen on PATH")
	}
	s := startServer(t, Options{})
	r := must(s.CreateRepo("app.git", "main"))(t)
	signer, _ := must2(NewSSHKey())(t)
	sha := must(r.Commit("main", Change{Message: "signed", Files: map[string]string{"f": "1"}, Signer: SSHSigner(signer)}))(t)
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte(AllowedSignersLine("jane@example.com", signer.PublicKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runGit(t, r.Dir(), "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "-v", sha)
	if !strings.Contains(out, `Good "git" signature for jane@example.com`) {
		t.Errorf("git verify-commit: %s", out)
	}

	forged := must(r.ReplaceTip("main", func(c *object.Commit) { c.Message = "forged\n" }))(t)
	if out, err := gitCmd(t, r.Dir(), "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", forged).CombinedOutput(); err == nil {
		t.Errorf("git verified a commit changed after signing: %s", out)
	}
}

// must2 is must for functions returning two values and an error.
func must2[A, B any](a A, b B, err error) func(*testing.T) (A, B) {
	return func(t *testing.T) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}
