// Package poll is how sluice's integration tests wait: for a condition to
// hold, polled until a deadline (never a sleep and a hope), with a context
// bounded per test, and with the manager's logs on stderr when
// SLUICE_TEST_LOG is set.
package poll

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// Interval is how often Until checks its condition.
	Interval = 100 * time.Millisecond
	// Timeout is how long Until waits: long enough for a busy two-core
	// machine, short enough that a stuck test says so well inside the
	// suite's timeout.
	Timeout = 2 * time.Minute
	// ContextTimeout bounds the API calls of one test.
	ContextTimeout = 3 * time.Minute
)

// Until polls cond every Interval until it holds, and fails the test after
// Timeout with what it waited for and cond's last description of what it
// saw.
func Until(t testing.TB, what string, cond func() (ok bool, seen string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), Interval, Timeout, true, func(context.Context) (bool, error) {
		ok, seen := cond()
		last = seen
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}

// Context returns a context for the API calls of a test, cancelled after
// ContextTimeout or when the test ends.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ContextTimeout)
	t.Cleanup(cancel)
	return ctx
}

// Logger is the logger for a manager run by a test: stderr when
// SLUICE_TEST_LOG is set, nothing otherwise.
func Logger() logr.Logger {
	if os.Getenv("SLUICE_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}
