package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Start-up deadlines, each from the start of its step. They are generous:
// on a warm cache the whole start takes seconds, but a loaded CI machine
// can be slow, and a crash fails the step at once anyway.
const (
	etcdTimeout      = 30 * time.Second
	apiserverTimeout = 90 * time.Second
	settleTimeout    = 90 * time.Second
	portAttempts     = 3
)

// Start runs a control plane and returns once it is usable: etcd healthy,
// kube-apiserver ready, the default ServiceAccount created and every fake
// node Ready and untainted. ctx bounds start-up only; the cluster runs until
// Stop. On failure Start stops what it started and keeps the state
// directory, whose logs the error quotes.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	began := time.Now()
	c, err := newCluster(opts)
	if err != nil {
		return nil, fmt.Errorf("starting cluster: %w", err)
	}
	if err := c.start(ctx); err != nil {
		c.tempDir = false // keep the logs for whoever reads the error
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, fmt.Errorf("starting cluster in %s: %w", c.Dir(), err)
	}
	c.logf("cluster ready in %s; KUBECONFIG=%s", since(began), c.KubeconfigPath())
	return c, nil
}

// start runs the components in dependency order and waits for the cluster
// to settle.
func (c *Cluster) start(ctx context.Context) error {
	if c.binDir == "" {
		dir, err := Binaries(ctx, c.log)
		if err != nil {
			return err
		}
		c.binDir = dir
	} else if err := checkBinaries(c.binDir); err != nil {
		return err
	}
	creds, err := writePKI(c.layout.pkiDir(), time.Now())
	if err != nil {
		return fmt.Errorf("writing certificates: %w", err)
	}

	var etcdURL string
	err = c.startServing(ctx, etcdBinary, 2, etcdTimeout, func(ports []int) ([]string, condition) {
		etcdURL = loopbackURL("http", ports[0])
		return etcdArgs(c.layout, ports[0], ports[1]), etcdHealthy(etcdURL)
	})
	if err != nil {
		return err
	}
	err = c.startServing(ctx, apiserverBinary, 1, apiserverTimeout, func(ports []int) ([]string, condition) {
		server := loopbackURL("https", ports[0])
		c.rest = restConfig(server, creds.caCert, creds.clients[adminIdentity])
		return apiserverArgs(c.layout, etcdURL, ports[0]), apiserverReady(c.rest)
	})
	if err != nil {
		return err
	}
	if err := writeKubeconfigs(c.layout, c.rest.Host, creds); err != nil {
		return err
	}

	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	clients := []struct {
		name string
		args []string
	}{
		{controllerManagerBinary, controllerManagerArgs(c.layout)},
		{schedulerBinary, schedulerArgs(c.layout)},
		{kwokBinary, kwokArgs(c.layout, c.binDir)},
	}
	for _, cl := range clients {
		if _, err := c.launch(cl.name, cl.args); err != nil {
			return err
		}
	}
	if err := createFakeNodes(ctx, cs, c.nodes, c.podNet); err != nil {
		return err
	}
	if err := c.settle(ctx, cs); err != nil {
		return err
	}
	return publishKubeconfig(c.layout)
}

// settle waits for what kube-controller-manager and kwok must do before
// workloads run: the default ServiceAccount (pods are rejected without it)
// and Ready, untainted nodes.
func (c *Cluster) settle(ctx context.Context, cs kubernetes.Interface) error {
	began := time.Now()
	procs := c.processes()
	// Order the watched processes so a timeout quotes the log of the
	// component responsible: the controller manager for the ServiceAccount,
	// kwok for the nodes.
	if err := waitFor(ctx, "the default ServiceAccount", settleTimeout,
		moveLast(procs, controllerManagerBinary), defaultServiceAccountExists(cs, metav1.NamespaceDefault)); err != nil {
		return err
	}
	if err := waitFor(ctx, fmt.Sprintf("%d Ready nodes", c.nodes), settleTimeout,
		moveLast(procs, kwokBinary), fakeNodesReady(cs, c.nodes)); err != nil {
		return err
	}
	c.running.Store(true)
	for _, p := range procs {
		if p.exited() {
			return p.exitError()
		}
	}
	c.logf("controllers and %d nodes ready in %s", c.nodes, since(began))
	return nil
}

// startServing launches a component that listens on ports picked just
// before, and waits for ready. If the component fails because another
// process took one of its ports meanwhile, it retries with new ports.
func (c *Cluster) startServing(ctx context.Context, name string, nPorts int, timeout time.Duration,
	configure func(ports []int) (args []string, ready condition)) error {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(nPorts)
		if err != nil {
			return err
		}
		args, ready := configure(ports)
		began := time.Now()
		p, err := c.launch(name, args)
		if err != nil {
			return err
		}
		err = waitFor(ctx, name, timeout, c.processes(), ready)
		if err == nil {
			c.logf("%s ready in %s", name, since(began))
			return nil
		}
		if !p.exited() || !addressInUse(p.logTail()) || attempt == portAttempts {
			return err
		}
		c.logf("%s lost a port to another process; retrying with new ports", name)
		if err := c.discard(p); err != nil {
			return err
		}
	}
}

// processes returns the started processes in start order.
func (c *Cluster) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*process(nil), c.procs...)
}

// moveLast returns procs with the process called name moved to the end.
func moveLast(procs []*process, name string) []*process {
	out := make([]*process, 0, len(procs))
	var last []*process
	for _, p := range procs {
		if p.name == name {
			last = append(last, p)
			continue
		}
		out = append(out, p)
	}
	return append(out, last...)
}
