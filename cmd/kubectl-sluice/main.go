// Command kubectl-sluice is the kubectl plugin for sluice: put it on PATH
// and run `kubectl sluice`. The commands live in internal/plugin; this file
// only wires them to the process: its streams, its signals and its exit
// status.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/plugin"
)

func main() {
	// The client logs nothing a user needs; without a logger
	// controller-runtime warns that none was set.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}).ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
