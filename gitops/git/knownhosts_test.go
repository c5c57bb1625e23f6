package git_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// A real SSH server (test/gitserver) is reached only when the known hosts list its host key
// for its address: exactly, hashed or by a wildcard; a revoked key, a key listed for another
// host and a negated pattern are refused with ErrHostKey.
func TestReader_ssh_knownHosts(t *testing.T) {
	s := startServer(t, gitserver.Options{SSH: true})
	repo := must(s.CreateRepo("app.git", "main"))(t)
	head := commitN(t, repo, "main", 1, 1)[0]
	_, clientKey, err := gitserver.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	line := string(s.KnownHosts())
	hostKey := must(parseLine(line))(t)
	u := must(url.Parse(s.SSHURL("app.git")))(t)
	host := knownhosts.Normalize(u.Host) // [127.0.0.1]:port
	other, _, err := gitserver.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	otherRSA := must(ssh.NewPublicKey(&must(rsa.GenerateKey(rand.Reader, 2048))(t).PublicKey))(t)
	port := u.Port()

	tests := []struct {
		name       string
		knownHosts string
		wantErr    string // "" when the fetch must succeed
	}{
		{"listed", line, ""},
		{"listed among comments and another host", "# sluice\n" + knownhosts.Line([]string{"example.com"}, other.PublicKey()) + "\n" + line, ""},
		{"hashed", knownhosts.Line([]string{knownhosts.HashHostname(host)}, hostKey) + "\n", ""},
		{"wildcard", knownhosts.Line([]string{"[127.0.0.*]:" + port}, hostKey) + "\n", ""},
		{"another key for the host", knownhosts.Line([]string{host}, other.PublicKey()) + "\n" + knownhosts.Line([]string{host}, hostKey) + "\n", ""},
		{"only another key of its type for the host", knownhosts.Line([]string{host}, otherRSA) + "\n", "which the known hosts do not list for it"},
		{"the host's key listed for another host", knownhosts.Line([]string{"example.com"}, hostKey) + "\n", "list no key"},
		{"negated", knownhosts.Line([]string{"[127.0.0.*]:" + port, "!" + host}, hostKey) + "\n", "list no key"},
		{"revoked", line + "@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey))) + "\n", "revoked"},
		{"the host's key as a certificate authority only", "@cert-authority " + line, "list no key"},
		{"not known_hosts", "this is not a known_hosts line\n", "known_hosts:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := git.New(git.Options{URL: s.SSHURL("app.git"), Branch: "main",
				Auth: git.Auth{SSHPrivateKey: clientKey, KnownHosts: []byte(tt.knownHosts)}})
			if err == nil {
				var c git.Commit
				c, err = r.Fetch(ctx(t))
				if err == nil && c.SHA != head {
					t.Fatalf("fetched %s, want %s", c.SHA, head)
				}
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("fetch: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			case (tt.wantErr == "revoked" || strings.Contains(tt.wantErr, "do not list")) && !errors.Is(err, git.ErrHostKey):
				t.Fatalf("error = %v, want ErrHostKey", err)
			case strings.Contains(tt.name, "not known_hosts") && strings.Contains(err.Error(), "sluice-known-hosts"):
				t.Fatalf("error %v names the temporary file", err)
			}
		})
	}
}

// parseLine reads the key of one known_hosts line.
func parseLine(line string) (ssh.PublicKey, error) {
	_, _, key, _, _, err := ssh.ParseKnownHosts([]byte(line))
	return key, err
}
