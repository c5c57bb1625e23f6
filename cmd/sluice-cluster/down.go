package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	"github.com/sluice-dev/sluice/test/cluster"
)

// Deadlines of down: the supervisor stops the processes itself, each within
// a grace period; what still runs after downTimeout is killed.
const (
	downTimeout  = 60 * time.Second
	killTimeout  = 5 * time.Second
	downInterval = 100 * time.Millisecond
)

// downCommand stops the cluster in DIR: it asks the supervisor to stop
// (SIGTERM), waits for the supervisor and every recorded process to be gone,
// kills any left over, and prints what it stopped.
func downCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("down", stderr)
	dir := fs.String("dir", defaultDir(), "state directory of the cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sup, err := readSupervisor(*dir)
	if err != nil {
		return err
	}
	procs, err := cluster.Processes(*dir)
	if err != nil {
		return err
	}
	var targets []cluster.Process
	// In stop order: the supervisor, then the components newest first.
	order := append([]cluster.Process{sup}, procs...)
	slices.Reverse(order[1:])
	for _, p := range order {
		if p.Alive() {
			targets = append(targets, p)
		}
	}
	if len(targets) == 0 {
		removeState(*dir)
		fmt.Fprintf(stdout, "no cluster runs in %s\n", *dir)
		return nil
	}

	if sup.Alive() {
		signalProcess(stderr, sup, syscall.SIGTERM, false)
	} else {
		// No supervisor (killed hard, or on a system without Pdeathsig):
		// stop the components ourselves, newest first.
		for _, p := range order[1:] {
			signalProcess(stderr, p, syscall.SIGTERM, true)
		}
	}
	left := waitGone(targets, downTimeout)
	for _, p := range left {
		fmt.Fprintf(stderr, "%s did not stop; killing it\n", p)
		signalProcess(stderr, p, syscall.SIGKILL, p != sup)
	}
	left = waitGone(left, killTimeout)
	removeState(*dir)
	for _, p := range targets {
		if !slices.Contains(left, p) {
			fmt.Fprintf(stdout, "stopped %s\n", p)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("still running after SIGKILL: %v", left)
	}
	return nil
}

// signalProcess sends sig to p, or to its process group if group is set,
// and reports a failure other than "already gone" on stderr.
func signalProcess(stderr io.Writer, p cluster.Process, sig syscall.Signal, group bool) {
	pid := p.PID
	if group {
		pid = -pid
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintf(stderr, "signalling %s: %v\n", p, err)
	}
}

// waitGone waits up to timeout for procs to exit and returns those that
// still run.
func waitGone(procs []cluster.Process, timeout time.Duration) []cluster.Process {
	deadline := time.Now().Add(timeout)
	for {
		left := slices.DeleteFunc(slices.Clone(procs), func(p cluster.Process) bool { return !p.Alive() })
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(downInterval)
	}
}
