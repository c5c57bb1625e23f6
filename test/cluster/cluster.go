package cluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// Defaults and limits of Options.
const (
	defaultNodes = 3
	maxNodes     = 250 // each node gets a /24 of podCIDR
)

// stopGrace is how long a process may take to exit after SIGTERM before it
// gets SIGKILL.
const stopGrace = 10 * time.Second

// Options configures Start.
type Options struct {
	// Nodes is the number of fake nodes to register; 0 means 3.
	Nodes int
	// Dir is the state directory: certificates, etcd data, kubeconfigs, the
	// pids file and one log file per process under logs/. Start clears what
	// an earlier cluster left there and refuses a directory whose cluster
	// still runs. Empty means a new temporary directory that Stop removes.
	Dir string
	// BinDir holds the binaries and kwok's stages; empty means what
	// Binaries returns, which may build them first.
	BinDir string
	// Log receives progress lines ("starting etcd", "kube-apiserver ready
	// in 4.2s"); nil discards them. The processes' own output goes to files
	// in Dir/logs, never here.
	Log io.Writer
	// PodNetwork is the IPv4 /16 that pod IPs come from, each fake node
	// taking the /24 at its index; empty means 10.244.0.0/16. The data-plane
	// tests set a range they have made local to this machine, so that they
	// can serve each pod's address themselves.
	PodNetwork string
}

// Cluster is a running local control plane. Its methods are safe for
// concurrent use.
type Cluster struct {
	layout  layout
	nodes   int
	podNet  string // the /16 of pod IPs
	binDir  string
	log     io.Writer
	tempDir bool // Dir was created by Start; Stop removes it
	rest    *rest.Config

	mu    sync.Mutex // guards procs
	procs []*process // in start order

	running  atomic.Bool // start-up finished; exits now count as failures
	stopping atomic.Bool
	failed   chan error
	stopOnce sync.Once
	stopErr  error
}

// newCluster resolves opts and prepares the state directory.
func newCluster(opts Options) (*Cluster, error) {
	c := &Cluster{nodes: opts.Nodes, binDir: opts.BinDir, log: opts.Log, failed: make(chan error, 1)}
	if c.nodes == 0 {
		c.nodes = defaultNodes
	}
	if c.nodes < 0 || c.nodes > maxNodes {
		return nil, fmt.Errorf("options: Nodes must be between 1 and %d, got %d", maxNodes, opts.Nodes)
	}
	if c.log == nil {
		c.log = io.Discard
	}
	c.podNet = podCIDR
	if opts.PodNetwork != "" {
		if _, err := nodePodCIDRIn(opts.PodNetwork, 0); err != nil {
			return nil, fmt.Errorf("options: PodNetwork: %w", err)
		}
		c.podNet = opts.PodNetwork
	}
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "sluice-cluster-")
		if err != nil {
			return nil, fmt.Errorf("creating state directory: %w", err)
		}
		dir, c.tempDir = tmp, true
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving state directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	running, err := runningProcesses(dir)
	if err != nil {
		return nil, err
	}
	if len(running) > 0 {
		return nil, fmt.Errorf("a cluster still runs in %s (%v); stop it first", dir, running)
	}
	c.layout = layout(dir)
	if err := c.layout.reset(); err != nil {
		return nil, fmt.Errorf("preparing state directory: %w", err)
	}
	return c, nil
}

// KubeconfigPath returns the path of the admin kubeconfig, Dir/kubeconfig,
// which embeds its credentials (user sluice-admin in group system:masters).
// Start writes it last, once the cluster is ready, and Stop removes it, so
// unless the process running it was killed, the file exists exactly while a
// usable cluster runs.
func (c *Cluster) KubeconfigPath() string { return c.layout.kubeconfig() }

// RESTConfig returns a new copy of the admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// Dir returns the state directory.
func (c *Cluster) Dir() string { return c.layout.dir() }

// Nodes returns the number of fake nodes; FakeNodeSelector selects them.
func (c *Cluster) Nodes() int { return c.nodes }

// Failed returns a channel that receives an error, with the log tail, when
// a control-plane process exits on its own after Start returned. Only the
// first failure is delivered; the channel is never closed.
func (c *Cluster) Failed() <-chan error { return c.failed }

// Stop stops every process Start began, newest first (kwok, scheduler,
// controller manager, kube-apiserver, etcd): SIGTERM to its process group,
// SIGKILL after a grace period. It removes the pids file, the admin
// kubeconfig and, if Start created it, the state directory; logs in a
// caller's Dir stay. It is idempotent; later calls return the first call's
// result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

// stop does Stop's work once.
func (c *Cluster) stop() error {
	c.stopping.Store(true)
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()

	var errs []error
	for _, p := range slices.Backward(procs) {
		began := time.Now()
		if err := p.stop(stopGrace); err != nil {
			errs = append(errs, err)
			continue
		}
		c.logf("stopped %s in %s", p.name, since(began))
	}
	for _, f := range []string{c.layout.pidsFile(), c.layout.kubeconfig()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", f, err))
		}
	}
	if c.tempDir && len(errs) == 0 {
		if err := os.RemoveAll(c.Dir()); err != nil {
			errs = append(errs, fmt.Errorf("removing state directory: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping cluster in %s: %w", c.Dir(), err)
	}
	return nil
}

// launch starts the named binary, records it in the pids file and watches
// for it to exit.
func (c *Cluster) launch(name string, args []string) (*process, error) {
	c.logf("starting %s", name)
	p, err := startProcess(name, filepath.Join(c.binDir, name), args, c.Dir(), c.layout.logFile(name))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.stopping.Load() {
		c.mu.Unlock()
		return nil, errors.Join(fmt.Errorf("starting %s: the cluster is stopping", name), p.stop(stopGrace))
	}
	c.procs = append(c.procs, p)
	recorded := c.recorded()
	c.mu.Unlock()
	go c.watch(p)
	if err := writePIDs(c.layout, recorded); err != nil {
		return nil, err
	}
	return p, nil
}

// discard forgets a process that exited during start-up, before a retry.
func (c *Cluster) discard(p *process) error {
	c.mu.Lock()
	c.procs = slices.DeleteFunc(c.procs, func(q *process) bool { return q == p })
	recorded := c.recorded()
	c.mu.Unlock()
	return writePIDs(c.layout, recorded)
}

// recorded lists the processes for the pids file; c.mu must be held.
func (c *Cluster) recorded() []Process {
	out := make([]Process, 0, len(c.procs))
	for _, p := range c.procs {
		out = append(out, Process{Name: p.name, PID: p.pid()})
	}
	return out
}

// watch reports p's exit on Failed if the cluster is up and not stopping.
func (c *Cluster) watch(p *process) {
	<-p.done
	if !c.running.Load() || c.stopping.Load() || p.replaced.Load() {
		return
	}
	select {
	case c.failed <- p.exitError():
	default:
	}
}

// logf writes a progress line.
func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.log, format+"\n", args...)
}

// since returns the time elapsed since t, rounded for progress lines.
func since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}
