package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/test/cluster"
)

// Files the supervisor keeps in the state directory, beside the cluster's.
const (
	supervisorPIDFile = "supervisor.pid" // the supervisor's PID
	readyFile         = "ready"          // the kubeconfig path, once ready
	supervisorLogFile = "supervisor.log" // a detached supervisor's output
)

// supervisorName returns the command name the supervisor runs under: this
// program's, since up and down are the same binary. Process.Alive checks it
// so that a stale PID file never leads down to signal an unrelated process.
func supervisorName() string {
	exe, err := os.Executable()
	if err != nil {
		return filepath.Base(os.Args[0])
	}
	return filepath.Base(exe)
}

// readSupervisor returns the supervisor recorded in dir; PID 0 if none.
func readSupervisor(dir string) (cluster.Process, error) {
	p := cluster.Process{Name: supervisorName()}
	data, err := os.ReadFile(filepath.Join(dir, supervisorPIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("reading supervisor PID: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return p, fmt.Errorf("parsing %s: %w", filepath.Join(dir, supervisorPIDFile), err)
	}
	p.PID = pid
	return p, nil
}

// runningSupervisor returns an error if a supervisor still runs in dir.
func runningSupervisor(dir string) error {
	sup, err := readSupervisor(dir)
	if err != nil {
		return err
	}
	if sup.Alive() {
		return fmt.Errorf("a cluster already runs in %s (supervisor pid %d); stop it with: sluice-cluster down --dir %s", dir, sup.PID, dir)
	}
	return nil
}

// writeAtomic writes data to dir/name through a temporary file, so a reader
// polling for the file never sees it half written.
func writeAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// removeState removes the supervisor's files from dir.
func removeState(dir string) {
	for _, name := range []string{readyFile, supervisorPIDFile} {
		_ = os.Remove(filepath.Join(dir, name)) // absent is fine
	}
}

// readReady returns the kubeconfig path from dir's ready file, or "".
func readReady(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, readyFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
