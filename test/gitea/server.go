package gitea

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// loopbackHost is the address the server listens on.
const loopbackHost = "127.0.0.1"

// Defaults of Options.
const (
	// DefaultStartTimeout bounds how long Start waits for the API: generous,
	// for a busy two-core machine.
	DefaultStartTimeout = 3 * time.Minute
	// DefaultWebhookTimeout is how long Gitea waits for a webhook receiver.
	DefaultWebhookTimeout = 10 * time.Second
)

// portAttempts is how often Start picks another port when the one it chose
// was taken before Gitea could bind it.
const portAttempts = 3

// The administrator Start creates.
const (
	// AdminLogin is the site administrator's login.
	AdminLogin = "sluice-admin"
	// AdminPassword is the site administrator's password.
	AdminPassword = "sluice-admin-password"
)

// Options configure Start.
type Options struct {
	// Dir is the server's state directory (app.ini, SQLite database,
	// repositories, log). Empty means a new temporary directory, removed by
	// Stop.
	Dir string
	// StartTimeout bounds the wait for the API; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// WebhookTimeout is how long Gitea waits for a webhook receiver to
	// answer (whole seconds); zero means DefaultWebhookTimeout.
	WebhookTimeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Server is a running Gitea.
type Server struct {
	// URL is the server's root URL, "http://127.0.0.1:<port>/". The API is
	// under URL + "api/v1", repositories clone from URL + "<owner>/<repo>.git".
	URL string
	// Admin is the site administrator, with a token of every scope.
	Admin *User
	// Version is what the server reports as its version.
	Version string

	dir     string
	ownsDir bool
	proc    *process
}

// Dir returns the server's state directory.
func (s *Server) Dir() string { return s.dir }

// LogPath returns the path of the server's log.
func (s *Server) LogPath() string { return s.proc.logPath }

// Start finds the Gitea build, prepares a state directory, creates the
// database and the administrator, starts "gitea web" on a free loopback port
// and waits until its API answers. Without a build it fails with a
// *NotBuiltError that names the fix.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "gitea: "+format+"\n", args...)
		}
	}
	build, err := buildDir(ctx)
	if err != nil {
		return nil, err
	}
	s := &Server{dir: opts.Dir}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "sluice-gitea-"); err != nil {
			return nil, fmt.Errorf("creating the state directory: %w", err)
		}
		s.ownsDir = true
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := os.MkdirAll(filepath.Join(s.dir, "log"), 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	bin := filepath.Join(build, "gitea")
	cfg := config{dir: s.dir, static: filepath.Join(build, "static"), webhookTimeout: seconds(opts.WebhookTimeout, DefaultWebhookTimeout)}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	for attempt := 1; ; attempt++ {
		if cfg.port, err = freePort(); err != nil {
			return nil, err
		}
		ini, err := cfg.write()
		if err != nil {
			return nil, err
		}
		global := []string{"--work-path", s.dir, "--config", ini}
		if attempt == 1 {
			logf("creating the database in %s", s.dir)
			if _, err := run(ctx, "migrate", bin, append(global, "migrate"), s.dir); err != nil {
				return nil, err
			}
			token, err := createAdmin(ctx, bin, global, s.dir)
			if err != nil {
				return nil, err
			}
			s.Admin = &User{Login: AdminLogin, Password: AdminPassword, Email: AdminLogin + "@sluice.test", Token: token}
		}
		s.URL = fmt.Sprintf("http://%s:%d/", loopbackHost, cfg.port)
		logf("starting gitea web on %s", s.URL)
		if s.proc, err = start(bin, append(global, "web"), s.dir, filepath.Join(s.dir, "log", "gitea.log")); err != nil {
			return nil, err
		}
		err = s.waitReady(ctx, timeout)
		if err == nil {
			break
		}
		if attempt < portAttempts && s.proc.exited() && strings.Contains(s.proc.logTail(), "address already in use") {
			logf("port %d was taken, trying another", cfg.port)
			continue
		}
		return nil, err
	}
	s.Admin.server = s
	logf("gitea %s is serving %s", s.Version, s.URL)
	return s, nil
}

// createAdmin creates the site administrator with a token of every scope and
// returns the token.
func createAdmin(ctx context.Context, bin string, global []string, dir string) (string, error) {
	args := append(append([]string(nil), global...), "admin", "user", "create", "--admin",
		"--username", AdminLogin, "--password", AdminPassword, "--email", AdminLogin+"@sluice.test",
		"--must-change-password=false", "--access-token", "--access-token-name", "sluice-test", "--access-token-scopes", "all")
	out, err := run(ctx, "admin user create", bin, args, dir)
	if err != nil {
		return "", err
	}
	const marker = "Access token was successfully created..."
	for _, line := range strings.Split(out, "\n") {
		if _, token, ok := strings.Cut(line, marker); ok && strings.TrimSpace(token) != "" {
			return strings.TrimSpace(token), nil
		}
	}
	return "", fmt.Errorf("gitea admin user create printed no access token:\n%s", formatTail([]byte(out), tailLines))
}

// waitReady polls GET /api/v1/version until it answers, the process exits,
// ctx ends or timeout passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if s.proc.exited() {
			return s.proc.exitError()
		}
		v, err := s.version(ctx, client)
		if err == nil {
			s.Version = v
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the Gitea API at %s: %w (last: %v)\n%s", s.URL, ctx.Err(), last, s.proc.logTail())
		case <-tick.C:
		}
	}
}

// version asks the API for the server's version.
func (s *Server) version(ctx context.Context, client *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"api/v1/version", http.NoBody)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /api/v1/version: %s", resp.Status)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return "", fmt.Errorf("GET /api/v1/version: %w", err)
	}
	if v.Version == "" {
		return "", errors.New("GET /api/v1/version: no version")
	}
	return v.Version, nil
}

// Stop ends the server (SIGTERM, then SIGKILL after a grace period) and
// removes the state directory if Start created it. It is safe to call more
// than once.
func (s *Server) Stop() error {
	var errs []error
	if s.proc != nil {
		errs = append(errs, s.proc.stop(stopGrace))
	}
	if s.ownsDir {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", s.dir, err))
		}
		s.ownsDir = false
	}
	return errors.Join(errs...)
}

// freePort returns a TCP port on loopback that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", loopbackHost+":0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// seconds returns d in whole seconds (at least one), or def's when d is zero.
func seconds(d, def time.Duration) int {
	if d <= 0 {
		d = def
	}
	return max(int(d/time.Second), 1)
}
