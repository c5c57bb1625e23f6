package cluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
)

// Exit codes of a test binary that Main ends early.
const (
	exitStartFailed = 1
	exitSignal      = 130 // 128 + SIGINT, as shells report an interrupt
)

// Main is the body of a TestMain for a package whose tests share one
// cluster. It starts the cluster, calls setup (which stores the cluster for
// the tests, installs CRDs, starts controllers ...), runs the tests and
// stops the cluster, returning the exit code for os.Exit:
//
//	func TestMain(m *testing.M) {
//		os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
//			testCluster = c
//			return nil
//		}))
//	}
//
// The processes are stopped on every way out: a normal return, a panic in
// setup, and SIGINT or SIGTERM (Ctrl-C, go test's own interrupt), after
// which the binary exits with status 130. A test that panics or times out
// crashes the test binary without running deferred calls; on Linux the
// kernel then kills the processes, which carry a parent-death signal, and
// only the temporary state directory is left behind. With go test -v and a
// nil Options.Log, progress goes to stderr.
func Main(m *testing.M, opts Options, setup func(*Cluster) error) int {
	if !flag.Parsed() {
		flag.Parse() // m.Run would; Verbose needs it earlier
	}
	if opts.Log == nil && testing.Verbose() {
		opts.Log = os.Stderr
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var (
		mu      sync.Mutex
		started *Cluster
	)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		select {
		case sig := <-signals:
			signal.Stop(signals) // a second Ctrl-C kills at once
			cancel()             // aborts a start-up in progress, which cleans up itself
			mu.Lock()
			c := started
			mu.Unlock()
			if c != nil {
				fmt.Fprintf(os.Stderr, "cluster: %v: stopping the control plane\n", sig)
				if err := c.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
				os.Exit(exitSignal)
			}
		case <-ctx.Done():
		}
	}()

	c, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if ctx.Err() != nil {
			return exitSignal
		}
		return exitStartFailed
	}
	mu.Lock()
	started = c
	mu.Unlock()
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if ctx.Err() != nil { // interrupted just as start-up finished
		return exitSignal
	}
	if setup != nil {
		if err := setup(c); err != nil {
			fmt.Fprintf(os.Stderr, "cluster: setup: %v\n", err)
			return exitStartFailed
		}
	}
	return m.Run()
}
