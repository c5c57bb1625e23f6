package gitea

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

// Main is the body of a TestMain for a package whose tests share one Gitea.
// It starts the server, calls setup (which stores it for the tests), runs
// the tests and stops the server, returning the exit code for os.Exit. A
// server that cannot start (Gitea not built: the message says to run
// `make gitea`) fails the test binary. The server is stopped on a normal
// return, a failed setup, and SIGINT or SIGTERM; with go test -v and a nil
// Options.Log, progress goes to stderr.
func Main(m *testing.M, opts Options, setup func(*Server) error) int {
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
		started *Server
	)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		select {
		case sig := <-signals:
			signal.Stop(signals)
			cancel()
			mu.Lock()
			s := started
			mu.Unlock()
			if s != nil {
				fmt.Fprintf(os.Stderr, "gitea: %v: stopping the server\n", sig)
				if err := s.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
				os.Exit(exitSignal)
			}
		case <-ctx.Done():
		}
	}()

	s, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gitea: %v\n", err)
		if ctx.Err() != nil {
			return exitSignal
		}
		return exitStartFailed
	}
	mu.Lock()
	started = s
	mu.Unlock()
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if setup != nil {
		if err := setup(s); err != nil {
			fmt.Fprintf(os.Stderr, "gitea: setup: %v\n", err)
			return exitStartFailed
		}
	}
	return m.Run()
}
