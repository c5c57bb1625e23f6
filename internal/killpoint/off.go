//go:build !sluicetest

package killpoint

import "context"

// Enabled is false: this build never blocks.
const Enabled = false

// Reached marks point p for the object namespace/name; in this build it
// does nothing.
func Reached(context.Context, Point, string) {}

// ReachedIf is Reached when cond holds.
func ReachedIf(context.Context, bool, Point, string) {}

// After is Reached when err is nil; it returns err.
func After(_ context.Context, _ Point, _ string, err error) error { return err }
