package gitea

import "syscall"

// sysProcAttr puts a child in its own process group and has the kernel kill
// it when the thread that started it dies, which covers a test binary that
// panics, times out or is killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
