//go:build unix && !linux

package cluster

import "syscall"

// sysProcAttr puts a child in its own process group. Only Linux can have the
// kernel kill children with their parent; elsewhere a test binary killed
// hard leaves its cluster running, and the pids file in the state directory
// (see Processes) lists what to stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
