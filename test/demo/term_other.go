//go:build !linux

package main

import "io"

// terminal reports the output as not a terminal: the live view is only
// implemented on Linux, elsewhere the demo appends lines.
func terminal(io.Writer) (live bool, width int) {
	return false, defaultWidth
}
