package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logFiles are the demo's own log files. Everything that logs in the demo's
// process writes there, never to the terminal:
//
//   - sluice.log: the manager, and every library that logs through
//     controller-runtime's global logger or klog (client-go);
//   - git-server.log: the standard library's logger, which the Git server
//     (gitkit) writes a line to for every request Flux and sluice make;
//   - github.log: what the GitHub stand-in found wrong with a request or a
//     delivery (GitHub would have refused it).
//
// The control plane and Flux run as processes with logs of their own, in
// the state directory's cluster/logs and flux/logs.
type logFiles struct {
	dir                 string
	sluice, std, github *os.File
	// logger writes to sluice.log.
	logger logr.Logger
	// reporter receives the GitHub stand-in's findings.
	reporter *githubReporter
}

// openLogs creates the log files in dir afresh and sends every logger of
// the process to them. It must run before anything logs:
// controller-runtime's global logger, unset, prints a stack trace to stderr
// ("log.SetLogger(...) was never called") the first time anyone derives a
// logger from it more than 30 seconds after the process started, which
// client.New does whenever a client is made without a logger.
func openLogs(dir string) (*logFiles, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clearing the logs of the last run: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &logFiles{dir: dir}
	for _, f := range []struct {
		file **os.File
		name string
	}{{&l.sluice, "sluice.log"}, {&l.std, "git-server.log"}, {&l.github, "github.log"}} {
		file, err := os.Create(filepath.Join(dir, f.name))
		if err != nil {
			return nil, fmt.Errorf("creating the log %s: %w", f.name, err)
		}
		*f.file = file
	}
	l.logger = zap.New(zap.WriteTo(l.sluice), zap.ConsoleEncoder())
	ctrl.SetLogger(l.logger)
	klog.SetLogger(l.logger)
	log.SetOutput(l.std)
	l.reporter = &githubReporter{w: l.github}
	return l, nil
}

// path returns the path of the log file name.
func (l *logFiles) path(name string) string { return filepath.Join(l.dir, name) }

// close stops logging to the files and closes them.
func (l *logFiles) close() error {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	log.SetOutput(io.Discard)
	var first error
	for _, f := range []*os.File{l.sluice, l.std, l.github} {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// githubReporter writes what the GitHub stand-in reports to its log and
// counts it: a request or delivery GitHub would refuse is a bug the demo
// must not hide.
type githubReporter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

// Errorf implements githubfake.Reporter.
func (r *githubReporter) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	fmt.Fprintf(r.w, format+"\n", args...)
}

// count returns how many problems were reported.
func (r *githubReporter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
