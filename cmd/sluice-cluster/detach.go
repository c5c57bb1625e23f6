package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-dev/sluice/test/cluster"
)

// Limits of the detached start-up.
const (
	readyPollInterval = 100 * time.Millisecond
	logTailLines      = 30
	abandonGrace      = 30 * time.Second
)

// detach builds or finds the binaries (progress on stderr), starts a
// supervisor (this program's `up` in a new session, so it outlives the
// terminal and the caller) with its output in DIR/supervisor.log, and waits
// for the cluster to be ready. It then prints the KUBECONFIG line and
// returns; on failure it prints the log's tail.
func detach(o upOptions, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	binDir, err := cluster.Binaries(ctx, stderr)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to re-run it: %w", err)
	}
	removeState(o.dir)
	logPath := filepath.Join(o.dir, supervisorLogFile)
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("creating supervisor log: %w", err)
	}
	defer func() { _ = logFile.Close() }()

	cmd := exec.Command(exe, "up", "--dir", o.dir, "--nodes", strconv.Itoa(o.nodes))
	cmd.Env = append(os.Environ(), cluster.EnvControlPlaneDir+"="+binDir)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(stderr, "started supervisor (pid %d), log %s; waiting for the cluster\n", cmd.Process.Pid, logPath)

	kubeconfig, err := awaitReady(ctx, o, exited)
	if err != nil {
		abandon(cmd, exited)
		fmt.Fprintf(stderr, "supervisor log (%s):\n%s\n", logPath, tail(logPath, logTailLines))
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	fmt.Fprintf(stdout, "export KUBECONFIG=%s\n", kubeconfig)
	fmt.Fprintf(stderr, "cluster ready; stop it with: sluice-cluster down --dir %s\n", o.dir)
	return nil
}

// awaitReady waits for the supervisor's ready file and returns the
// kubeconfig path it holds.
func awaitReady(ctx context.Context, o upOptions, exited <-chan error) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	ticker := time.NewTicker(readyPollInterval)
	defer ticker.Stop()
	for {
		if kubeconfig := readReady(o.dir); kubeconfig != "" {
			return kubeconfig, nil
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("the supervisor exited before the cluster was ready: %w", exitErr(err))
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for the cluster: %w", ctx.Err())
		case <-ticker.C:
		}
	}
}

// abandon stops a supervisor whose cluster did not come up: SIGTERM, which
// makes it stop what it started, then SIGKILL if it takes too long.
func abandon(cmd *exec.Cmd, exited <-chan error) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return // already gone
	}
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(abandonGrace):
		_ = cmd.Process.Kill() // its children die with it (Pdeathsig)
		exitErr = <-exited
	}
	_ = exitErr // the exit status of an abandoned supervisor does not matter
}

// exitErr describes how a process exited; a nil error becomes "exit status 0".
func exitErr(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// tail returns the last n lines of the file at path, indented.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("  (%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}
