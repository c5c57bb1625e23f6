//go:build unix && !linux

package gitea

import "syscall"

// sysProcAttr puts a child in its own process group. Without Linux's
// parent-death signal, a crashed test binary may leave the server running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
