package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/sluice-dev/sluice/test/cluster"
)

// buildCommand builds the control-plane binaries (a no-op once cached),
// showing the build's progress, and prints their directory.
func buildCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("build", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dir, err := cluster.Binaries(ctx, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, dir)
	return nil
}
