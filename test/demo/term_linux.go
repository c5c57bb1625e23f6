package main

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// terminal reports whether out is a terminal the demo can redraw in place,
// and its width in columns.
func terminal(out io.Writer) (live bool, width int) {
	f, ok := out.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false, defaultWidth
	}
	var ws struct{ Row, Col, X, Y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return false, defaultWidth
	}
	if ws.Col == 0 {
		return true, defaultWidth
	}
	return true, min(max(int(ws.Col)-1, 40), maxWidth)
}
