package restart

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sluice is one sluice manager process.
type sluice struct {
	name                    string
	cmd                     *exec.Cmd
	exited                  chan struct{}
	webhook, probe, metrics int
	log                     string
}

// startSluice runs the sluice binary in local mode as process name, with
// extra flags, and waits until its webhooks are registered and it is ready.
func startSluice(t *testing.T, name string, extra ...string) *sluice {
	t.Helper()
	s := &sluice{name: name, webhook: freePort(t), probe: freePort(t), metrics: freePort(t), exited: make(chan struct{})}
	s.log = filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"--local", "--webhook-config-name=" + name,
		"--webhook-port=" + strconv.Itoa(s.webhook),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(s.probe),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(s.metrics),
		"--kubeconfig=" + suite.kubeconfig,
	}, extra...)
	s.cmd = exec.Command(suite.binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting sluice %s: %v", name, err)
	}
	go func() {
		_ = s.cmd.Wait()
		_ = logFile.Close()
		close(s.exited)
	}()
	t.Cleanup(func() { s.kill(t) })
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.exited:
			return false, fmt.Errorf("sluice %s exited", name)
		default:
		}
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := suite.c.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil || len(cfg.Webhooks) == 0 {
			return false, nil //nolint:nilerr // not registered yet
		}
		url := cfg.Webhooks[0].ClientConfig.URL
		return url != nil && strings.Contains(*url, ":"+strconv.Itoa(s.webhook)+"/") && s.ready(), nil
	})
	if err != nil {
		t.Fatalf("sluice %s not ready: %v\n%s", name, err, s.tail())
	}
	return s
}

func (s *sluice) ready() bool {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(s.probe) + "/readyz") //nolint:noctx // a probe with the default client's timeouts is fine here
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leader reports whether this process holds the leader lease, from its
// metrics.
func (s *sluice) leader() bool {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(s.metrics) + "/metrics") //nolint:noctx // see ready
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// kill ends the process with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone. Its webhook registration stays behind.
func (s *sluice) kill(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("sluice %s did not die", s.name)
	}
}

func (s *sluice) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
