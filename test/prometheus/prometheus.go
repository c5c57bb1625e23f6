// Package prometheus runs a real Prometheus server (Debian's package,
// installed by `make prometheus`) for a test: on a free loopback port, with
// a temporary configuration and data directory, scraping the targets the
// test gives it every second, stopped when the test ends. Exporter serves
// counters a test controls, for Prometheus to scrape.
package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-dev/sluice/test/poll"
)

// Binary is the Prometheus executable looked up on PATH.
const Binary = "prometheus"

// Server is a Prometheus server run by a test.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL  string
	cmd  *exec.Cmd
	log  string
	auth *BasicAuth
}

// Options change how Start runs Prometheus.
type Options struct {
	// BasicAuth, when set, makes the API ask for this user and password
	// (its web configuration's basic_auth_users).
	BasicAuth *BasicAuth
}

// BasicAuth is a user Prometheus accepts.
type BasicAuth struct{ User, Password string }

// Start runs Prometheus scraping targets ("host:port", each serving
// /metrics) every second, and waits until it is ready. Without the
// prometheus binary the test fails with how to install it.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	return StartWith(t, Options{}, targets...)
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options, targets ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		t.Fatalf("prometheus is not on PATH: run `make prometheus` (hack/prometheus.sh installs Debian's package): %v", err)
	}
	dir := t.TempDir()
	quoted := make([]string, 0, len(targets))
	for _, tg := range targets {
		quoted = append(quoted, strconv.Quote(tg))
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: test
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", "))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{auth: o.BasicAuth, URL: "http://127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(dir, "prometheus.log")}
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{}
	if o.BasicAuth != nil {
		hash, err := bcrypt.GenerateFromPassword([]byte(o.BasicAuth.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		web := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(web, fmt.Appendf(nil, "basic_auth_users:\n  %s: %s\n", o.BasicAuth.User, hash), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--web.config.file="+web)
	}
	s.cmd = exec.Command(bin, append(args,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--web.console.templates="+filepath.Join(dir, "consoles"),
		"--web.console.libraries="+filepath.Join(dir, "console_libraries"),
		"--log.level=warn",
	)...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); _ = logFile.Close(); close(exited) }()
	t.Cleanup(func() { s.stop(exited) })
	poll.Until(t, "prometheus ready at "+s.URL, func() (bool, string) {
		select {
		case <-exited:
			b, _ := os.ReadFile(s.log)
			t.Fatalf("prometheus exited: %s", b)
		default:
		}
		resp, err := http.Get(s.URL + "/-/ready") //nolint:noctx // a local probe
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		// Behind basic authentication, a 401 is a server that answers.
		return resp.StatusCode == http.StatusOK || (o.BasicAuth != nil && resp.StatusCode == http.StatusUnauthorized), resp.Status
	})
	return s
}

// stop ends the process Start began: SIGTERM, then SIGKILL after 10s.
func (s *Server) stop(exited <-chan struct{}) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-exited
	}
}

// Query runs an instant query and returns the values of its samples (a
// vector) or its value (a scalar).
func (s *Server) Query(ctx context.Context, query string) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/query?query="+url.QueryEscape(query), http.NoBody)
	if err != nil {
		return nil, err
	}
	if s.auth != nil {
		req.SetBasicAuth(s.auth.User, s.auth.Password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, errors.New(body.Error)
	}
	var out []float64
	switch body.Data.ResultType {
	case "vector":
		var v []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			return nil, err
		}
		for _, x := range v {
			f, err := strconv.ParseFloat(fmt.Sprint(x.Value[1]), 64)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	default:
		return nil, fmt.Errorf("result type %s", body.Data.ResultType)
	}
	return out, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
