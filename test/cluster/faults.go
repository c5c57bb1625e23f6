package cluster

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// Faults the chaos tests inject into a running control plane. They leave
// every other process alone, and the cluster keeps its state: etcd's data,
// the certificates and the clients' configuration stay valid.

// RestartAPIServer stops kube-apiserver (SIGTERM, SIGKILL after the grace
// period, as a rolling restart does) and starts it again with the same
// flags and port, returning once it is ready again. While it is down every
// client's request fails.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	old, err := c.process(apiserverBinary)
	if err != nil {
		return err
	}
	began := time.Now()
	old.replaced.Store(true) // its exit is no failure
	if err := old.stop(stopGrace); err != nil {
		return err
	}
	c.mu.Lock()
	c.procs = slices.DeleteFunc(c.procs, func(q *process) bool { return q == old })
	c.mu.Unlock()
	if _, err := c.launch(apiserverBinary, old.cmd.Args[1:]); err != nil {
		return err
	}
	if err := waitFor(ctx, apiserverBinary, apiserverTimeout, c.processes(), apiserverReady(c.rest)); err != nil {
		return err
	}
	c.logf("restarted %s in %s", apiserverBinary, since(began))
	return nil
}

// PauseEtcd freezes etcd (SIGSTOP) for d, then lets it go on (SIGCONT), as
// a stalled disk or a long garbage-collection pause would: kube-apiserver's
// requests wait on it and time out.
func (c *Cluster) PauseEtcd(d time.Duration) error {
	p, err := c.process(etcdBinary)
	if err != nil {
		return err
	}
	if err := signalGroup(p.pid(), syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pausing etcd: %w", err)
	}
	time.Sleep(d) // the fault is the pause itself
	if err := signalGroup(p.pid(), syscall.SIGCONT); err != nil {
		return fmt.Errorf("resuming etcd: %w", err)
	}
	c.logf("paused etcd for %s", d)
	return nil
}

// process returns the running process called name.
func (c *Cluster) process(name string) (*process, error) {
	for _, p := range c.processes() {
		if p.name == name && !p.exited() {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no running %s in the cluster in %s", name, c.Dir())
}
