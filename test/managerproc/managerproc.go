// Package managerproc runs the sluice manager as a process of its own, the
// way the restart, recovery, HA and chaos tests need it: started in local
// mode against the test control plane, waited for until it serves, asked
// whether it leads, and killed with SIGKILL as a crash or an OOM kill would.
package managerproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/poll"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Readiness says when a started process counts as ready.
type Readiness int

const (
	// Registered waits until the process has registered its admission
	// webhooks (pointing at its own port) and answers /readyz.
	Registered Readiness = iota
	// Serving waits until /readyz answers and, when it serves GitHub
	// webhooks, its receiver accepts connections.
	Serving
	// Healthy waits until /healthz answers: a standby that does not lead.
	Healthy
)

// Options describe one process.
type Options struct {
	// Name is the process's name: its webhook configurations carry it.
	Name string
	// Binary is the sluice manager binary.
	Binary string
	// Kubeconfig is the control plane's kubeconfig file.
	Kubeconfig string
	// Client reads the webhook registration and deletes it.
	Client client.Client
	// Flags are added to the local-mode flags.
	Flags []string
	// Env is added to the process's environment.
	Env []string
	// GitHubHook serves GitHub webhooks on a port of the process's own.
	GitHubHook bool
	// Ready says when Start returns; Registered when zero.
	Ready Readiness
	// Timeout bounds the wait for readiness; a minute when zero.
	Timeout time.Duration
	// TailBytes is how much of the log Tail returns; 4000 when zero.
	TailBytes int
	// KillPoints make a binary built with the sluicetest tag block at
	// these points (internal/killpoint), for objects in KillNamespace (all
	// when empty), until it is killed; ReachedKillPoints says which it
	// blocked at.
	KillPoints    []killpoint.Point
	KillNamespace string
}

// Process is one running (or exited) sluice manager.
type Process struct {
	// Name is Options.Name.
	Name string
	// Webhook, Probe, Metrics and GitHubHook are the process's loopback
	// ports (GitHubHook is 0 unless Options.GitHubHook).
	Webhook, Probe, Metrics, GitHubHook int
	// Log is the file its standard output and error go to.
	Log string
	// killPoints is the file the kill points reached are recorded in.
	killPoints string

	opts   Options
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs the process and waits until it is ready as o.Ready says,
// failing the test with the end of its log if it is not. The process is
// killed when the test ends.
//
// Its ports are chosen free just before it starts, and the kernel may hand
// one of them to another socket (an outgoing connection's local port) in
// between; a process that exits because a port is taken is started again
// on new ports, up to three times.
func Start(t *testing.T, o Options) *Process {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, err := start(t, o)
		if err == nil {
			return p
		}
		if attempt < 3 && errors.Is(err, errPortTaken) {
			t.Logf("sluice %s: %v; starting it again on other ports", o.Name, err)
			continue
		}
		t.Fatal(err)
	}
}

// errPortTaken is start's error when the process could not bind a port.
var errPortTaken = errors.New("a port chosen for it was taken before it bound it")

// start runs the process once; see Start.
func start(t *testing.T, o Options) (*Process, error) {
	t.Helper()
	p := &Process{Name: o.Name, Webhook: FreePort(t), Probe: FreePort(t), Metrics: FreePort(t), opts: o, exited: make(chan struct{})}
	p.Log = filepath.Join(t.TempDir(), o.Name+".log")
	logFile, err := os.Create(p.Log)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := asManager(o.Kubeconfig, t.TempDir())
	if err != nil {
		return nil, err
	}
	args := []string{
		"--local", "--webhook-config-name=" + o.Name,
		"--webhook-port=" + strconv.Itoa(p.Webhook),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(p.Probe),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(p.Metrics),
		"--kubeconfig=" + kubeconfig,
	}
	if o.GitHubHook {
		p.GitHubHook = FreePort(t)
		args = append(args, "--github-webhook-bind-address=127.0.0.1:"+strconv.Itoa(p.GitHubHook))
	}
	p.cmd = exec.Command(o.Binary, append(args, o.Flags...)...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	procEnv := o.Env
	if len(o.KillPoints) > 0 {
		p.killPoints = filepath.Join(t.TempDir(), o.Name+".points")
		names := make([]string, len(o.KillPoints))
		for i, kp := range o.KillPoints {
			names[i] = string(kp)
		}
		procEnv = append(procEnv, killpoint.EnvPoint+"="+strings.Join(names, ","), killpoint.EnvNamespace+"="+o.KillNamespace, killpoint.EnvFile+"="+p.killPoints)
	}
	if len(procEnv) > 0 {
		p.cmd.Env = append(os.Environ(), procEnv...)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting sluice %s: %w", o.Name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { p.Kill(t) })
	timeout := o.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.exited:
			if strings.Contains(p.Tail(), "address already in use") {
				return false, errPortTaken
			}
			return false, fmt.Errorf("sluice %s exited", o.Name)
		default:
		}
		return p.ready(ctx), nil
	})
	if errors.Is(err, errPortTaken) {
		return nil, fmt.Errorf("sluice %s exited: %w\n%s", o.Name, err, p.Tail())
	}
	if err != nil {
		return nil, fmt.Errorf("sluice %s not ready: %w\n%s", o.Name, err, p.Tail())
	}
	return p, nil
}

func (p *Process) ready(ctx context.Context) bool {
	switch p.opts.Ready {
	case Healthy:
		return p.get("/healthz") == http.StatusOK
	case Serving:
		if p.get("/readyz") != http.StatusOK {
			return false
		}
		if p.GitHubHook == 0 {
			return true
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p.GitHubHook), time.Second)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	default:
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := p.opts.Client.Get(ctx, client.ObjectKey{Name: p.Name}, cfg); err != nil || len(cfg.Webhooks) == 0 {
			return false
		}
		url := cfg.Webhooks[0].ClientConfig.URL
		return url != nil && strings.Contains(*url, ":"+strconv.Itoa(p.Webhook)+"/") && p.get("/readyz") == http.StatusOK
	}
}

// get answers the status code of a probe path, 0 when it does not answer.
func (p *Process) get(path string) int {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(p.Probe) + path) //nolint:noctx // a probe with the default client's timeouts
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Ready reports whether the process answers /readyz.
func (p *Process) Ready() bool {
	return p.get("/readyz") == http.StatusOK
}

// Leader reports whether the process holds the leader lease, from its
// metrics.
func (p *Process) Leader() bool {
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(p.Metrics) + "/metrics") //nolint:noctx // see get
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

// Exited is closed once the process has ended.
func (p *Process) Exited() <-chan struct{} {
	return p.exited
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone. Its webhook registration stays behind (see
// DeleteWebhooks).
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("sluice %s did not die", p.Name)
	}
}

// DeleteWebhooks removes the webhook configurations the process registered:
// a killed one leaves them behind, as a Service would keep no endpoint for
// a dead pod.
func (p *Process) DeleteWebhooks(ctx context.Context) {
	DeleteWebhooks(ctx, p.opts.Client, p.Name)
}

// DeleteWebhooks removes the webhook configurations of the processes named.
func DeleteWebhooks(ctx context.Context, c client.Client, names ...string) {
	for _, n := range names {
		_ = c.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: n}})
		_ = c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
}

// Tail returns the end of the process's log.
func (p *Process) Tail() string {
	n := p.opts.TailBytes
	if n == 0 {
		n = 4000
	}
	b, _ := os.ReadFile(p.Log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ReachedKillPoints waits until the process blocks at one or more of its
// kill points and returns them, failing the test if none is reached in
// time or the process exits first.
func (p *Process) ReachedKillPoints(t *testing.T) []killpoint.Point {
	t.Helper()
	if p.killPoints == "" {
		t.Fatalf("sluice %s was started without kill points", p.Name)
	}
	var got []killpoint.Point
	poll.Until(t, fmt.Sprintf("sluice %s to reach one of the kill points %v", p.Name, p.opts.KillPoints), func() (bool, string) {
		select {
		case <-p.exited:
			t.Fatalf("sluice %s exited before reaching a kill point:\n%s", p.Name, p.Tail())
		default:
		}
		b, err := os.ReadFile(p.killPoints)
		if err != nil {
			return false, err.Error()
		}
		got = got[:0]
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if kp, _, ok := strings.Cut(line, " "); ok && !slices.Contains(got, killpoint.Point(kp)) {
				got = append(got, killpoint.Point(kp))
			}
		}
		return len(got) > 0, string(b)
	})
	return got
}

// asManager writes a copy of the kubeconfig file whose every user
// impersonates sluice's own identity (env.ManagerUser, as the in-process
// manager of test/env does), and returns its path. sluice recognises its
// own writes by the authenticated user, so it must not share the
// identity the tests, Flux and kubectl write with.
func asManager(kubeconfig, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	for _, u := range cfg.AuthInfos {
		u.Impersonate = env.ManagerUser
		u.ImpersonateGroups = []string{"system:masters"}
	}
	path := filepath.Join(dir, "sluice.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the manager's kubeconfig: %w", err)
	}
	return path, nil
}

// FreePort returns a loopback TCP port free at the time of the call.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// Build builds the sluice manager binary into dir, with the build tags
// given (sluicetest compiles the kill points in), and returns its path.
func Build(dir string, tags ...string) (string, error) {
	bin := filepath.Join(dir, "sluice")
	args := []string{"build"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "-o", bin, "github.com/sluice-dev/sluice/cmd/sluice")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building sluice: %v\n%s", err, out)
	}
	return bin, nil
}
