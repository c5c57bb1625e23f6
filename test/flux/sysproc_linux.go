package flux

import "syscall"

// sysProcAttr puts a child in its own process group and has the kernel kill
// it when the thread that started it dies, which covers a test binary that
// panics, times out or is killed with SIGKILL. (The Go runtime keeps its
// threads for the life of the process unless a goroutine exits while
// locked to one.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
