package plugin

import (
	"github.com/spf13/cobra"

	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
	"github.com/sluice-dev/sluice/observability/snapshot"
	"github.com/sluice-dev/sluice/workload/kinds"
	"github.com/sluice-dev/sluice/workload/revisions"
)

func newHistoryCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "history ROLLOUT",
		Short: "List a Rollout's releases and approvals, oldest first",
		Long: `List, one line each and oldest first: the revisions the workload keeps
(ReplicaSets of a Deployment, ControllerRevisions of other kinds) with their
numbers and images, the Rollout's events (Progressing, StepPaused, Completed,
RolledBack, ...) and the approvals sluice applied (sluice.dev/approvals: step,
revision, by, via). Events expire (after an hour by default); the revisions
and the approval record (the 20 newest) stay.`,
		Example:           `  kubectl sluice history web -n shop`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := o.session()
			if err != nil {
				return err
			}
			ro, err := s.rollout(ctx, args[0])
			if err != nil {
				return err
			}
			var revs []revisions.Revision
			if w, err := s.workload(ctx, ro); err == nil {
				if revs, err = revisions.List(ctx, s.c, w, kinds.KeptIn(w.GroupVersionKind())); err != nil {
					return err
				}
			}
			events, err := snapshot.Events(ctx, s.c, ro)
			if err != nil {
				return err
			}
			return view.WriteHistory(o.streams.Out, view.HistoryOf(ro, revs, events))
		},
	}
}
