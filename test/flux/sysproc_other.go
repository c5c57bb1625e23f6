//go:build unix && !linux

package flux

import "syscall"

// sysProcAttr puts a child in its own process group. Only Linux can have the
// kernel kill children with their parent; elsewhere a test binary killed
// hard leaves its controllers running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
