package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/approve"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
)

// pollInterval is how often a command waiting for sluice reads the Rollout.
const pollInterval = 250 * time.Millisecond

// waitFlags are the flags of the commands that wait for sluice.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

func (w *waitFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&w.wait, "wait", true, "Wait until "+what)
	cmd.Flags().DurationVar(&w.timeout, "timeout", 2*time.Minute, "How long to wait")
}

func newApproveCommand(o *options) *cobra.Command {
	var step int32
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "approve ROLLOUT",
		Short: "Approve the paused step of a Rollout's release (or every step up to --step)",
		Long: `Approve the current paused step of a Rollout's release, or every step from it
up to --step, the way docs/approvals.md describes: the annotation
sluice.dev/approve=step=N,revision=<revision being released>. sluice's
admission webhook records who wrote it; sluice applies it and appends it to
the record in sluice.dev/approvals. The approval is pinned to the revision:
it approves nothing of any other release.`,
		Example: `  kubectl sluice approve web -n shop
  kubectl sluice approve web -n shop --step 3`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			plan, err := approve.Step(ro, step)
			if err != nil {
				return err
			}
			return runApproval(cmd.Context(), s, o.streams.Out, ro, plan, w, approve.Approved)
		}),
	}
	cmd.Flags().Int32Var(&step, "step", 0, "Approve every step from the current one up to this one (counted from 1)")
	w.add(cmd, "sluice applied the approval")
	return cmd
}

func newPromoteFullCommand(o *options) *cobra.Command {
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "promote-full ROLLOUT",
		Short: "Approve every remaining step of a Rollout's release",
		Long: `Approve every remaining step of a Rollout's release: the annotation
sluice.dev/approve=step=<number of steps>,revision=<revision being released>.
Steps that pause for a duration still wait for it. With --wait (the default)
the command returns once the release is complete.`,
		Example:           `  kubectl sluice promote-full web -n shop`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			plan, err := approve.Full(ro)
			if err != nil {
				return err
			}
			return runApproval(cmd.Context(), s, o.streams.Out, ro, plan, w, approve.Completed)
		}),
	}
	w.add(cmd, "the release is complete")
	return cmd
}

// judge tells whether a written approval is done with.
type judge func(ro *rolloutsv1beta1.Rollout, plan approve.Plan, before []approval.Approval) approve.Outcome

// runApproval writes plan on ro and, with w.wait, waits until judge says
// it is done with, then says what sluice recorded.
func runApproval(ctx context.Context, s *session, out io.Writer, ro *rolloutsv1beta1.Rollout, plan approve.Plan, w waitFlags, done judge) error {
	before := approve.Records(ro)
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{rolloutsv1beta1.ApproveAnnotation: plan.Value()}}}
	if err := s.patchRollout(ctx, ro, patch); err != nil {
		return fmt.Errorf("writing the approval of rollout %s: %w", progress.Ref(ro), err)
	}
	by := "unknown"
	if c, err := approval.ParseContext(ro.Annotations[rolloutsv1beta1.ApproveContextAnnotation]); err == nil && c.By != "" {
		by = c.By
	}
	steps := fmt.Sprintf("step %d", plan.Step)
	if plan.Step > plan.From {
		steps = fmt.Sprintf("steps %d to %d", plan.From, plan.Step)
	}
	fmt.Fprintf(out, "rollout %s: %s of revision %s approved by %s (%s=%s)\n",
		progress.Ref(ro), steps, plan.Revision, by, rolloutsv1beta1.ApproveAnnotation, plan.Value())
	if !w.wait {
		return nil
	}
	var outcome approve.Outcome
	err := wait.PollUntilContextTimeout(ctx, pollInterval, w.timeout, true, func(ctx context.Context) (bool, error) {
		got, err := s.rollout(ctx, ro.Name)
		if err != nil {
			return false, err
		}
		ro, outcome = got, done(got, plan, before)
		return outcome.Done, nil
	})
	for _, a := range outcome.Applied {
		at := "-"
		if a.At != nil {
			at = view.Timestamp(*a.At)
		}
		fmt.Fprintf(out, "rollout %s: sluice applied step %d of revision %s, approved by %s via %s at %s\n",
			progress.Ref(ro), a.Step, a.Revision, a.By, a.Via, at)
	}
	switch {
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("waiting for sluice to apply the approval of rollout %s: %w", progress.Ref(ro), err)
	case err != nil:
		p, _ := progress.Of(ro)
		return fmt.Errorf("rollout %s did not get there within %s (it is at step %d in state %s: %s); see %s",
			progress.Ref(ro), w.timeout, p.Common.CurrentStepIndex, p.Common.CurrentStepState, ro.Status.Message, progress.Command(ro, "status"))
	case outcome.MovedOn != "":
		fmt.Fprintf(out, "rollout %s moved on: %s\n", progress.Ref(ro), outcome.MovedOn)
	default:
		p, _ := progress.Of(ro)
		fmt.Fprintf(out, "rollout %s is at step %d/%d in state %s\n", progress.Ref(ro), p.Common.CurrentStepIndex, plan.Steps, p.Common.CurrentStepState)
	}
	return nil
}
