package dataplane

import "syscall"

// procAttr makes the proxy die with the test binary.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
