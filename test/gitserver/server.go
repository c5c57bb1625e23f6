// Package gitserver is a Git server for tests: it serves repositories over
// smart HTTP (optionally HTTPS, with basic auth) and SSH, with the system's
// git doing the protocol (through github.com/fluxcd/pkg/gittestserver), and
// writes commits into them with go-git: files, merges, squashes, reverts
// written as git revert writes them, commits signed with OpenPGP or SSH
// keys made in the test. Every HTTP request is recorded, with what the
// client asked for and how many objects it was sent, so a test can tell an
// incremental fetch from a full one.
//
// It is test support, not used by sluice.
package gitserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options configure a Server.
type Options struct {
	// Username and Password switch on HTTP basic auth; requests without
	// them, or with others, are answered 401. SSH then also checks keys
	// (see SSHAuthorizedKey).
	Username, Password string
	// TLS serves HTTPS with a certificate made for 127.0.0.1 (trust it with
	// CABundle) instead of plain HTTP.
	TLS bool
	// SSH also serves the repositories over SSH (see SSHURL, KnownHosts).
	SSH bool
	// SSHAuthorizedKey is the one client key SSH accepts when Username is
	// set; without Username SSH accepts any client.
	SSHAuthorizedKey ssh.PublicKey
}

// Server serves the repositories in a temporary directory.
type Server struct {
	git  *gittestserver.GitServer
	root string
	opts Options
	log  *requestLog
	ca   []byte

	sshDone    chan error
	knownHosts []byte
}

// Start starts a server on loopback ports. Close stops it and removes its
// repositories.
func Start(opts Options) (*Server, error) {
	root, err := os.MkdirTemp("", "sluice-gitserver-")
	if err != nil {
		return nil, err
	}
	s := &Server{root: root, opts: opts, log: &requestLog{}}
	repos := filepath.Join(root, "repos")
	if err := os.Mkdir(repos, 0o700); err != nil {
		return nil, errors.Join(err, os.RemoveAll(root))
	}
	s.git = gittestserver.NewGitServer(repos)
	if opts.Username != "" {
		s.git.Auth(opts.Username, opts.Password)
	}
	s.git.AddHTTPMiddlewares(s.log.middleware)
	if err := s.startHTTP(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(root))
	}
	if opts.SSH {
		if err := s.startSSH(filepath.Join(root, "ssh")); err != nil {
			s.git.StopHTTP()
			return nil, errors.Join(err, os.RemoveAll(root))
		}
	}
	return s, nil
}

func (s *Server) startHTTP() error {
	if !s.opts.TLS {
		return s.git.StartHTTP()
	}
	cert, key, err := selfSignedCert()
	if err != nil {
		return err
	}
	s.ca = cert
	return s.git.StartHTTPS(cert, key, cert, "127.0.0.1")
}

func (s *Server) startSSH(keyDir string) error {
	s.git.KeyDir(keyDir)
	if s.opts.Username != "" {
		want := s.opts.SSHAuthorizedKey
		// gittestserver keeps this function in a package variable: SSH
		// servers with different authorized keys must not run at once.
		s.git.PublicKeyLookupFunc(func(content string) (*gitkit.PublicKey, error) {
			got, _, _, _, err := ssh.ParseAuthorizedKey([]byte(content))
			if err != nil {
				return nil, err
			}
			if want == nil || string(got.Marshal()) != string(want.Marshal()) {
				return nil, errors.New("key not authorized")
			}
			return &gitkit.PublicKey{Id: "test-user"}, nil
		})
	}
	if err := s.git.ListenSSH(); err != nil {
		return fmt.Errorf("listen SSH: %w", err)
	}
	pub, err := os.ReadFile(filepath.Join(keyDir, "gitkit.rsa.pub"))
	if err != nil {
		return fmt.Errorf("read SSH host key: %w", err)
	}
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey(pub)
	if err != nil {
		return fmt.Errorf("parse SSH host key: %w", err)
	}
	u, err := url.Parse(s.git.SSHAddress())
	if err != nil {
		return err
	}
	s.knownHosts = []byte(knownhosts.Line([]string{knownhosts.Normalize(u.Host)}, hostKey) + "\n")
	s.sshDone = make(chan error, 1)
	go func() { s.sshDone <- s.git.StartSSH() }()
	return nil
}

// Close stops the server and removes its repositories.
func (s *Server) Close() error {
	s.git.StopHTTP()
	var errs []error
	if s.sshDone != nil {
		if err := s.git.StopSSH(); err != nil {
			errs = append(errs, err)
		}
		if err := <-s.sshDone; err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(s.root))
	return errors.Join(errs...)
}

// URL is the HTTP(S) URL of the repository name, without credentials.
func (s *Server) URL(name string) string {
	return s.git.HTTPAddress() + "/" + name
}

// SSHURL is the ssh:// URL of the repository name, user git.
func (s *Server) SSHURL(name string) string {
	return s.git.SSHAddress() + "/" + name
}

// KnownHosts is the known_hosts line of the SSH server's host key.
func (s *Server) KnownHosts() []byte { return s.knownHosts }

// CABundle is the PEM certificate to trust for HTTPS.
func (s *Server) CABundle() []byte { return s.ca }

// Requests returns the HTTP requests served since the start or the last
// ResetRequests, oldest first.
func (s *Server) Requests() []Request { return s.log.list() }

// ResetRequests forgets the requests recorded so far.
func (s *Server) ResetRequests() { s.log.reset() }

// repoDir is where the repository name lives on disk.
func (s *Server) repoDir(name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if clean == "/" || strings.Contains(name, "..") {
		return "", fmt.Errorf("repository name %q", name)
	}
	return filepath.Join(s.git.Root(), clean), nil
}
