// Command demo shows sluice on a local control plane, live in the
// terminal, and then stops everything it started. `make demo` runs it.
//
// By default it tells the GitOps story: a Git repository served locally,
// real Flux (source-controller and kustomize-controller) applying it, a
// stand-in for GitHub (test/githubfake) holding the pull request and the
// commit statuses and delivering signed webhooks to sluice, and sluice's
// manager in-process with a GitGate bound to the Rollout. A pull request
// that bumps the image is merged; the release pauses and the merge commit
// shows a pending status; a reviewer's label approves the next step; a
// `git revert` of the merge, pushed while Flux is suspended, puts every pod
// and all traffic back on the stable version before Flux syncs it.
//
// With --basic (`make demo-basic`) it runs the kubectl-only release of
// examples/multi-batch-deployment instead.
//
// Usage:
//
//	go run ./test/demo [--basic] [--pace 3s] [--keep] [--plain] [--dir DIR]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Widths of the live panel, in columns.
const (
	defaultWidth = 80
	maxWidth     = 100
)

// options are the demo's flags.
type options struct {
	// basic runs the kubectl-only multi-batch release instead of the
	// GitOps story.
	basic bool
	// keep leaves everything running after the story until the demo is
	// interrupted.
	keep bool
	// pace is how long the demo shows what it is about to do before it
	// does it; zero runs the story without pauses.
	pace time.Duration
	// plain appends lines instead of redrawing a panel, even on a
	// terminal.
	plain bool
	// dir is the state directory; empty means $SLUICE_CACHE/demo.
	dir string
	// record, when set, is a file the demo writes the story's milestones
	// to, one JSON object a line (its test reads them).
	record string
}

// parseOptions reads the command line.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.basic, "basic", false, "run the kubectl-only multi-batch release instead of the GitOps story")
	fs.BoolVar(&o.keep, "keep", false, "after the story, keep everything running until interrupted (Ctrl-C), and print the commands to try by hand")
	fs.DurationVar(&o.pace, "pace", 3*time.Second, "how long the demo shows what it is about to do before it does it (0: no pauses)")
	fs.BoolVar(&o.plain, "plain", false, "append lines instead of redrawing a panel, even on a terminal")
	fs.StringVar(&o.dir, "dir", "", "state directory (default $SLUICE_CACHE/demo); a new run starts afresh there")
	fs.StringVar(&o.record, "record", "", "write the story's milestones to this file, one JSON object a line")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

func main() {
	os.Exit(exitCode(os.Args[1:], os.Stdout, os.Stderr))
}

// exitCode runs the demo until it ends or is interrupted and returns the
// process exit status.
func exitCode(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, o, stdout)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "demo: interrupted; everything it started is stopped")
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	return 0
}

// run runs the demo, writing to out, and stops what it started before it
// returns, also when ctx ends.
func run(ctx context.Context, o options, out io.Writer) (err error) {
	dir := o.dir
	if dir == "" {
		if dir, err = stateDir(); err != nil {
			return err
		}
	}
	// First of all: every library that logs (controller-runtime, client-go,
	// the Git server) writes to files from now on, never over the story.
	logs, err := openLogs(filepath.Join(dir, "logs"))
	if err != nil {
		return err
	}
	st := &stack{out: out, dir: dir, logs: logs}
	defer func() {
		err = errors.Join(err, st.stop(), logs.close())
		st.printLogs()
	}()
	if o.basic {
		return runBasic(ctx, o, out, st)
	}
	return runGitOps(ctx, o, out, st)
}

// stateDir is where the demo keeps its state and logs: $SLUICE_CACHE/demo,
// SLUICE_CACHE defaulting to the user cache directory's sluice folder.
func stateDir() (string, error) {
	if cache := os.Getenv("SLUICE_CACHE"); cache != "" {
		return filepath.Join(cache, "demo"), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a state directory (or set SLUICE_CACHE): %w", err)
	}
	return filepath.Join(cache, "sluice", "demo"), nil
}

// withTag returns image with its tag replaced by tag.
func withTag(image, tag string) string {
	if t := imageTag(image); t != image {
		return image[:len(image)-len(t)] + tag
	}
	return image + ":" + tag
}

// linePrefixer writes every complete line it receives to w after prefix.
type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

// Write implements io.Writer.
func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
}
