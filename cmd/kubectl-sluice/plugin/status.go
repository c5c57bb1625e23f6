package plugin

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
)

func newStatusCommand(o *options) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status ROLLOUT",
		Short: "Show a Rollout's release: phase, steps, pods per revision, the approval it needs, conditions and events",
		Long: `Show a Rollout's release: its phase and message, its steps with the current
one marked, the pods of the stable and the new revision, the approval the
release waits for and the command that gives it, the conditions that are not
OK, and the Rollout's latest events.

With --watch the page is drawn again on every change of the Rollout, its
BatchRelease, its pods or its events: in place on a terminal, appended
otherwise. It stops on Ctrl-C or after --timeout.`,
		Example: `  kubectl sluice status web -n shop
  kubectl sluice status web -n shop --watch`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.session()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if !watch {
				snap, err := s.snapshot(ctx, args[0])
				if err != nil {
					return err
				}
				return view.Status(o.streams.Out, snap)
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			err = watchStatus(ctx, s, args[0], o.streams.Out)
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil // Ctrl-C or --timeout: the watch is over
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "Draw the status again on every change")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "Stop watching after this long (0: until Ctrl-C)")
	return cmd
}
