package git_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/crypto/ssh"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// sshKey is a key pair ssh-keygen wrote: the private key's file and the public key.
type sshKey struct {
	file string
	pub  ssh.PublicKey
}

// keygen writes a key pair of type typ ("ed25519", "rsa") with the real ssh-keygen.
func keygen(t *testing.T, typ string) sshKey {
	t.Helper()
	file := filepath.Join(t.TempDir(), "id_"+typ)
	run(t, "", nil, "ssh-keygen", "-q", "-t", typ, "-N", "", "-C", "", "-f", file)
	pub, _, _, _, err := ssh.ParseAuthorizedKey(must(os.ReadFile(file + ".pub"))(t))
	if err != nil {
		t.Fatal(err)
	}
	return sshKey{file: file, pub: pub}
}

// run runs a command of the machine, failing the test with its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not on PATH: install it (Debian and Ubuntu: apt-get install openssh-client git)", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitSignedCommit commits a file with the system git, signed by key (gpg.format=ssh, which
// runs ssh-keygen -Y sign), pushes it to the branch main of repo, and returns its SHA.
func gitSignedCommit(t *testing.T, repo *gitserver.Repo, key sshKey, message string) string {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Jane", "GIT_AUTHOR_EMAIL=jane@example.com", "GIT_COMMITTER_NAME=Jane", "GIT_COMMITTER_EMAIL=jane@example.com"}
	g := func(args ...string) string { return strings.TrimSpace(run(t, work, env, "git", args...)) }
	g("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "app.yaml"), []byte(message), 0o600); err != nil {
		t.Fatal(err)
	}
	g("add", "app.yaml")
	g("-c", "gpg.format=ssh", "-c", "user.signingkey="+key.file, "commit", "-q", "-S", "-m", message)
	g("push", "-q", "--force", repo.Dir(), "main:main")
	return g("rev-parse", "HEAD")
}

// keygenSigner is a go-git commit signer that signs with the real ssh-keygen -Y sign in
// namespace ns.
type keygenSigner struct {
	key sshKey
	ns  string
}

func (s keygenSigner) Sign(message io.Reader) ([]byte, error) {
	data, err := io.ReadAll(message)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ssh-keygen", "-Y", "sign", "-n", s.ns, "-f", s.key.file)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(stderr.String())
	}
	return out, nil
}

func TestReader_verify_sshSignaturesOfSSHKeygen(t *testing.T) {
	s := startServer(t, gitserver.Options{})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	jane, release, stranger := keygen(t, "ed25519"), keygen(t, "rsa"), keygen(t, "ed25519")
	allowed := gitserver.AllowedSignersLine("jane@example.com", jane.pub) + "\n" +
		`"release@example.com,rm@example.com" ` + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(release.pub))) + "\n" +
		`other@example.com namespaces="file" ` + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(stranger.pub))) + "\n"
	keys := must(git.ParseKeyring(nil, []byte(allowed)))(t)
	r := newReader(t, s, "app.git", "main", git.Options{})

	// verify pushes a commit, fetches it and verifies it.
	verify := func(t *testing.T, sha string) (git.Signer, error) {
		t.Helper()
		if _, err := r.Fetch(ctx(t)); err != nil {
			t.Fatal(err)
		}
		return r.Verify(ctx(t), sha, keys)
	}

	t.Run("ed25519 key, allowed for git", func(t *testing.T) {
		got, err := verify(t, gitSignedCommit(t, repo, jane, "v1"))
		if err != nil || got.Format != git.FormatSSH || strings.Join(got.Identities, ",") != "jane@example.com" || got.Fingerprint != ssh.FingerprintSHA256(jane.pub) {
			t.Fatalf("Verify = %+v, %v; want jane@example.com's SSH key", got, err)
		}
	})
	t.Run("RSA key (rsa-sha2-512), allowed in every namespace, two principals", func(t *testing.T) {
		got, err := verify(t, gitSignedCommit(t, repo, release, "v2"))
		if err != nil || strings.Join(got.Identities, ",") != "release@example.com,rm@example.com" {
			t.Fatalf("Verify = %+v, %v; want release@example.com and rm@example.com", got, err)
		}
	})
	t.Run("key allowed in another namespace only", func(t *testing.T) {
		if _, err := verify(t, gitSignedCommit(t, repo, stranger, "v3")); !errors.Is(err, git.ErrUnknownKey) {
			t.Fatalf("Verify error = %v, want ErrUnknownKey", err)
		}
	})
	t.Run("key not allowed", func(t *testing.T) {
		unknown := keygen(t, "ed25519")
		if _, err := verify(t, gitSignedCommit(t, repo, unknown, "v4")); !errors.Is(err, git.ErrUnknownKey) {
			t.Fatalf("Verify error = %v, want ErrUnknownKey", err)
		}
	})
	t.Run("commit changed after signing", func(t *testing.T) {
		gitSignedCommit(t, repo, jane, "v5")
		forged := must(repo.ReplaceTip("main", func(c *object.Commit) { c.Message = "forged\n" }))(t)
		if _, err := verify(t, forged); !errors.Is(err, git.ErrBadSignature) {
			t.Fatalf("Verify error = %v, want ErrBadSignature", err)
		}
	})
	t.Run("signed in another namespace", func(t *testing.T) {
		sha := must(repo.Commit("main", gitserver.Change{Message: "v6", Files: map[string]string{"app.yaml": "v6"},
			Signer: keygenSigner{key: jane, ns: "file"}}))(t)
		_, err := verify(t, sha)
		if !errors.Is(err, git.ErrBadSignature) || !strings.Contains(err.Error(), `namespace is "file"`) {
			t.Fatalf("Verify error = %v, want ErrBadSignature naming the namespace", err)
		}
	})
	t.Run("signed by ssh-keygen through go-git", func(t *testing.T) {
		sha := must(repo.Commit("main", gitserver.Change{Message: "v7", Files: map[string]string{"app.yaml": "v7"},
			Signer: keygenSigner{key: jane, ns: "git"}}))(t)
		if got, err := verify(t, sha); err != nil || strings.Join(got.Identities, ",") != "jane@example.com" {
			t.Fatalf("Verify = %+v, %v; want jane@example.com", got, err)
		}
	})
}
