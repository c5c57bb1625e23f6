package flux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Time limits of start-up.
const (
	// readyTimeout bounds the wait for a controller's readiness endpoint;
	// generous, for a machine busy with other test binaries.
	readyTimeout = 2 * time.Minute
	// startAttempts is how often a controller is started again on other
	// ports when one it was given was taken in the meantime.
	startAttempts = 3
)

// Options configure Start.
type Options struct {
	// Kubeconfig is the path of a kubeconfig for the control plane (a
	// test/cluster Cluster's KubeconfigPath); the controllers run with its
	// credentials, as the admin Flux's own installation would be.
	Kubeconfig string
	// Dir is the state directory: the artifact storage, the controllers'
	// temporary files and one log file per controller under logs/. Empty
	// means a new temporary directory that Stop removes unless a controller
	// failed (its logs are then kept and named in the error).
	Dir string
	// BinDir holds the binaries and CRDs; empty means what Binaries returns.
	BinDir string
	// Log receives progress lines ("source-controller ready in 1.2s"); nil
	// discards them. The controllers' own output goes to files in
	// Dir/logs, never here.
	Log io.Writer
}

// Flux is a running pair of Flux controllers. Its methods are safe for
// concurrent use.
type Flux struct {
	dir     string
	tempDir bool
	log     io.Writer
	cfg     *rest.Config
	c       client.Client

	mu    sync.Mutex
	procs []*process // in start order

	stopOnce sync.Once
	stopErr  error
}

// Start installs Flux's CRDs on the control plane of opts.Kubeconfig,
// starts source-controller and kustomize-controller and returns once both
// are ready. On error, whatever it started is stopped.
func Start(ctx context.Context, opts Options) (_ *Flux, err error) {
	if opts.Kubeconfig == "" {
		return nil, errors.New("options: Kubeconfig is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("options: Kubeconfig: %w", err)
	}
	bin := opts.BinDir
	if bin == "" {
		if bin, err = Binaries(ctx); err != nil {
			return nil, err
		}
	} else if err := checkBinaries(bin); err != nil {
		return nil, err
	}
	f := &Flux{dir: opts.Dir, log: opts.Log, cfg: cfg}
	if f.log == nil {
		f.log = io.Discard
	}
	if f.dir == "" {
		if f.dir, err = os.MkdirTemp("", "sluice-flux-"); err != nil {
			return nil, fmt.Errorf("creating the state directory: %w", err)
		}
		f.tempDir = true
	}
	for _, d := range []string{f.logDir(), f.storageDir(), f.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Stop())
		}
	}()
	if f.c, err = newClient(cfg); err != nil {
		return nil, err
	}
	began := time.Now()
	if err := installCRDs(ctx, f.c, filepath.Join(bin, crdDir)); err != nil {
		return nil, err
	}
	f.logf("flux CRDs installed in %s", since(began))
	if err := f.launch(ctx, sourceControllerBinary, filepath.Join(bin, sourceControllerBinary), opts.Kubeconfig, 3, func(ports []int) []string {
		storage := net.JoinHostPort(loopback, strconv.Itoa(ports[2]))
		return []string{
			"--storage-path=" + f.storageDir(),
			"--storage-addr=" + storage,
			"--storage-adv-addr=" + storage,
		}
	}); err != nil {
		return nil, err
	}
	if err := f.launch(ctx, kustomizeControllerBinary, filepath.Join(bin, kustomizeControllerBinary), opts.Kubeconfig, 2, func([]int) []string {
		return []string{"--no-remote-bases=true"}
	}); err != nil {
		return nil, err
	}
	return f, nil
}

// loopback is the address every controller endpoint binds to.
const loopback = "127.0.0.1"

// launch starts a controller with a metrics and a health endpoint on the
// first two of nPorts free loopback ports (extra(ports) adds its own flags)
// and waits until its readiness endpoint answers. A controller that could
// not bind a port is started again on others.
func (f *Flux) launch(ctx context.Context, name, bin, kubeconfig string, nPorts int, extra func(ports []int) []string) error {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(nPorts)
		if err != nil {
			return err
		}
		health := net.JoinHostPort(loopback, strconv.Itoa(ports[1]))
		args := append([]string{
			"--metrics-addr=" + net.JoinHostPort(loopback, strconv.Itoa(ports[0])),
			"--health-addr=" + health,
			"--watch-all-namespaces=true",
			"--log-encoding=console",
			"--events-addr=",
		}, extra(ports)...)
		env := []string{"KUBECONFIG=" + kubeconfig, "TMPDIR=" + f.tmpDir(), "RUNTIME_NAMESPACE=default"}
		f.logf("starting %s", name)
		began := time.Now()
		p, err := startProcess(name, bin, args, env, f.dir, filepath.Join(f.logDir(), name+".log"))
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.procs = append(f.procs, p)
		f.mu.Unlock()
		err = waitReady(ctx, p, "http://"+health+"/readyz")
		if err == nil {
			f.logf("%s ready in %s (pid %d)", name, since(began), p.pid())
			return nil
		}
		if !p.exited() || !strings.Contains(p.logTail(), "address already in use") || attempt == startAttempts {
			return err
		}
		f.logf("%s could not bind a port; trying others", name)
		f.forget(p)
	}
}

// waitReady polls url until it answers 200, failing when p exits, ctx ends
// or readyTimeout passes.
func waitReady(ctx context.Context, p *process, url string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("waiting for %s to be ready: %w", p.name, p.exitError())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be ready: %w (last check: %w)\n%s", p.name, ctx.Err(), last, p.logTail())
		case <-tick.C:
		}
	}
}

// forget drops a process that exited during start-up, before a retry.
func (f *Flux) forget(p *process) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.procs = slices.DeleteFunc(f.procs, func(q *process) bool { return q == p })
}

// Client returns a client of the control plane that reads and writes Flux's
// objects (as unstructured objects) and the core kinds.
func (f *Flux) Client() client.Client { return f.c }

// Dir returns the state directory.
func (f *Flux) Dir() string { return f.dir }

// LogFile returns the path of the named controller's log
// ("source-controller", "kustomize-controller").
func (f *Flux) LogFile(name string) string { return filepath.Join(f.logDir(), name+".log") }

// Failed returns the first controller that has exited on its own, with its
// log tail, or nil while both run.
func (f *Flux) Failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		if p.exited() {
			return p.exitError()
		}
	}
	return nil
}

// PIDs returns the process IDs of the controllers Start began, in start
// order; each is also its process group's ID.
func (f *Flux) PIDs() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int, 0, len(f.procs))
	for _, p := range f.procs {
		out = append(out, p.pid())
	}
	return out
}

// Stop stops the controllers Start began, newest first: SIGTERM to each
// one's process group, SIGKILL after a grace period. It removes a temporary
// state directory unless a controller had failed (the error then names its
// log). It is idempotent; later calls return the first call's result.
func (f *Flux) Stop() error {
	f.stopOnce.Do(func() { f.stopErr = f.stop() })
	return f.stopErr
}

// stop does Stop's work once.
func (f *Flux) stop() error {
	failed := f.Failed()
	f.mu.Lock()
	procs := slices.Clone(f.procs)
	f.mu.Unlock()
	var errs []error
	for _, p := range slices.Backward(procs) {
		began := time.Now()
		if err := p.stop(stopGrace); err != nil {
			errs = append(errs, err)
			continue
		}
		f.logf("stopped %s in %s", p.name, since(began))
	}
	if failed != nil {
		errs = append(errs, failed)
	}
	if f.tempDir && len(errs) == 0 {
		if err := os.RemoveAll(f.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing the state directory: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping flux in %s: %w", f.dir, err)
	}
	return nil
}

func (f *Flux) logDir() string     { return filepath.Join(f.dir, "logs") }
func (f *Flux) storageDir() string { return filepath.Join(f.dir, "storage") }
func (f *Flux) tmpDir() string     { return filepath.Join(f.dir, "tmp") }

// logf writes a progress line.
func (f *Flux) logf(format string, args ...any) {
	fmt.Fprintf(f.log, "flux: "+format+"\n", args...)
}

// since returns the time elapsed since t, rounded for progress lines.
func since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}

// freePorts returns n distinct TCP ports on loopback that were free a moment
// ago, holding every listener until it has them all so none repeats.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", loopback+":0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer func() { _ = l.Close() }() //nolint:gocritic // held open until every port is picked
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
