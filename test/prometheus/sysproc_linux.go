package prometheus

import "syscall"

// procAttr has the kernel kill Prometheus when the test binary dies.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
