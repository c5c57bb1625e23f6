package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/sluice-dev/sluice/test/cluster"
)

// upOptions are up's flags.
type upOptions struct {
	dir     string
	nodes   int
	detach  bool
	timeout time.Duration
}

// upCommand starts a cluster, in the foreground or detached.
func upCommand(args []string, stdout, stderr io.Writer) error {
	var o upOptions
	fs := newFlagSet("up", stderr)
	fs.StringVar(&o.dir, "dir", defaultDir(), "state directory: certificates, etcd data, kubeconfig, logs")
	fs.IntVar(&o.nodes, "nodes", 3, "number of fake nodes")
	fs.BoolVar(&o.detach, "detach", false, "run the supervisor in the background and return once the cluster is ready")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "with --detach, how long to wait for the cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return fmt.Errorf("resolving --dir: %w", err)
	}
	o.dir = dir
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", o.dir, err)
	}
	if err := runningSupervisor(o.dir); err != nil {
		return err
	}
	if o.detach {
		return detach(o, stdout, stderr)
	}
	return supervise(o, stdout, stderr)
}

// supervise starts the cluster, prints the KUBECONFIG line and keeps the
// cluster running until SIGINT, SIGTERM or SIGHUP, or until one of its
// processes dies; then it stops everything.
func supervise(o upOptions, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	removeState(o.dir)
	if err := writeAtomic(o.dir, supervisorPIDFile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return err
	}
	defer removeState(o.dir)

	progress := timestamped{w: stderr}
	c, err := cluster.Start(ctx, cluster.Options{Dir: o.dir, Nodes: o.nodes, Log: progress})
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if err := writeAtomic(o.dir, readyFile, []byte(c.KubeconfigPath()+"\n")); err != nil {
		return errors.Join(err, c.Stop())
	}
	fmt.Fprintf(stdout, "export KUBECONFIG=%s\n", c.KubeconfigPath())
	fmt.Fprintf(progress, "supervising pid %d; stop with Ctrl-C or: sluice-cluster down --dir %s\n", os.Getpid(), o.dir)

	var failure error
	select {
	case <-ctx.Done():
		fmt.Fprintln(progress, "stopping the cluster")
	case failure = <-c.Failed():
		fmt.Fprintf(progress, "stopping the cluster: %v\n", failure)
	}
	// Ignore further signals while stopping; the processes must not be
	// left behind by an impatient second Ctrl-C.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := c.Stop(); err != nil {
		return errors.Join(failure, err)
	}
	fmt.Fprintln(progress, "cluster stopped")
	return failure
}

// timestamped prefixes every write, a progress line, with the time.
type timestamped struct {
	w io.Writer
}

// Write writes p after a timestamp.
func (t timestamped) Write(p []byte) (int, error) {
	if _, err := fmt.Fprintf(t.w, "%s %s", time.Now().Format("15:04:05.000"), p); err != nil {
		return 0, err
	}
	return len(p), nil
}
