package plugin

import (
	"fmt"

	"github.com/spf13/cobra"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
)

// newPauseCommand returns `pause` (paused true) or `resume` (false): both
// set spec.strategy.paused.
func newPauseCommand(o *options, paused bool) *cobra.Command {
	use, short, example := "pause", "Freeze a Rollout's release where it is (spec.strategy.paused: true)", "  kubectl sluice pause web -n shop"
	if !paused {
		use, short, example = "resume", "Let a paused Rollout's release go on (spec.strategy.paused: false)", "  kubectl sluice resume web -n shop"
	}
	return &cobra.Command{
		Use:               use + " ROLLOUT",
		Short:             short,
		Example:           example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			out := o.streams.Out
			if ro.Spec.Strategy.Paused == paused {
				fmt.Fprintf(out, "rollout %s is already %sd: nothing changed\n", progress.Ref(ro), use)
				return nil
			}
			patch := map[string]any{"spec": map[string]any{"strategy": map[string]any{"paused": paused}}}
			if err := s.patchRollout(cmd.Context(), ro, patch); err != nil {
				return err
			}
			if paused {
				fmt.Fprintf(out, "rollout %s paused (spec.strategy.paused: true): the release stays where it is until %s\n",
					progress.Ref(ro), progress.Command(ro, "resume"))
				return nil
			}
			fmt.Fprintf(out, "rollout %s resumed (spec.strategy.paused: false)\n", progress.Ref(ro))
			return nil
		}),
	}
}
