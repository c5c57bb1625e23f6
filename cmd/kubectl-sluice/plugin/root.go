// Package plugin holds the commands of kubectl-sluice, the kubectl plugin
// for sluice's Rollouts (kubectl sluice get, status, approve, promote-full,
// pause, resume, abort (rollback), retry, history, recover). Each command reads and writes the
// cluster here and leaves rendering to package view and decisions to
// packages approve and revisions; cmd/kubectl-sluice/main.go only wires
// the root command to the process.
package plugin

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// FieldManager is the field manager of every write the plugin makes.
const FieldManager = "kubectl-sluice"

// options are what every command shares: the kubeconfig flags and the
// streams to write to.
type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

// NewCommand returns the root command, `kubectl sluice`, writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	cmd := &cobra.Command{
		Use:   "kubectl-sluice",
		Short: "Watch and drive sluice's progressive releases (rollouts.kruise.io Rollouts)",
		Long: `kubectl sluice shows and drives the releases of sluice's Rollouts
(rollouts.kruise.io/v1beta1, canary and blue-green): list them, watch one,
approve its paused steps, pause, resume, abort (roll back) or retry it, and
read its history.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl sluice"},
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	o.flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newGetCommand(o),
		newStatusCommand(o),
		newApproveCommand(o),
		newPromoteFullCommand(o),
		newPauseCommand(o, true),
		newPauseCommand(o, false),
		newAbortCommand(o),
		newRetryCommand(o),
		newHistoryCommand(o),
		newRecoverCommand(o),
	)
	return cmd
}
