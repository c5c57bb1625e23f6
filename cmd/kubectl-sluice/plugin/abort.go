package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/spf13/cobra"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/progress"
)

// via is how the plugin's requests are recorded.
const via = "kubectl-sluice"

func newAbortCommand(o *options) *cobra.Command {
	var reason string
	var w waitFlags
	cmd := &cobra.Command{
		Use:     "abort ROLLOUT",
		Aliases: []string{"rollback"},
		Short:   "Abort a Rollout's release: every pod and all traffic back on the stable revision at once",
		Long: `Abort a Rollout's release, as Argo Rollouts' abort does: every request and
every pod go back to the stable revision at once, and stay there. The pod
template is left as it is (it belongs to whoever applies the workload: a
GitOps tool would put a rewritten one back): sluice holds the workload on the
stable revision until the template changes. Set it back to the stable
revision (revert the commit in Git) and the rollback completes; a new
revision is released from step 1; kubectl sluice retry releases the aborted
revision again from step 1.

The command writes the annotation sluice.dev/abort, pinned to the revision
being released; sluice's admission webhook records who wrote it. rollback
is the same command.`,
		Example: `  kubectl sluice abort web -n shop
  kubectl sluice abort web -n shop --reason "5xx on checkout"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			return runAbort(cmd.Context(), s, o.streams.Out, ro, reason, w)
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "Why the release is aborted, recorded with it")
	w.add(cmd, "every pod and all traffic are on the stable revision")
	return cmd
}

func runAbort(ctx context.Context, s *session, out io.Writer, ro *rolloutsv1beta1.Rollout, reason string, w waitFlags) error {
	if a, ok := progress.AbortOf(ro); ok {
		return fmt.Errorf("the release of revision %s by rollout %s is already aborted (at step %d by %s): %s",
			a.Revision, progress.Ref(ro), a.Step, a.Who(), a.State())
	}
	p, ok := progress.Of(ro)
	if !ok || !progress.InRelease(ro) {
		return fmt.Errorf("rollout %s has no release in progress (phase %s): nothing to abort; to go back to an older revision, set the pod template of %s %s to it (in Git), which starts a new release",
			progress.Ref(ro), ro.Status.Phase, ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name)
	}
	now := time.Now().UTC()
	req := abort.Request{Revision: p.Revision, Via: via, At: &now, Reason: reason}
	if err := writeRequest(ctx, s, ro, rolloutsv1beta1.AbortAnnotation, req); err != nil {
		return err
	}
	fmt.Fprintf(out, "rollout %s: abort of the release of revision %s at step %d requested (%s)\n",
		progress.Ref(ro), p.Revision, p.Common.CurrentStepIndex, rolloutsv1beta1.AbortAnnotation)
	if !w.wait {
		return nil
	}
	got, err := waitFor(ctx, s, ro.Name, w.timeout, func(r *rolloutsv1beta1.Rollout) bool {
		a, ok := progress.AbortOf(r)
		return ok && (a.Held || a.Blocked != "")
	})
	if err != nil {
		return fmt.Errorf("rollout %s did not hold its stable revision within %s (%s); see %s: %w",
			progress.Ref(ro), w.timeout, got.Status.Message, progress.Command(ro, "status"), err)
	}
	a, _ := progress.AbortOf(got)
	fmt.Fprintf(out, "rollout %s: release of revision %s aborted at step %d by %s: %s\n", progress.Ref(ro), a.Revision, a.Step, a.Who(), a.State())
	fmt.Fprintf(out, "The pod template of %s %s is left as it is.\n", ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name)
	for _, l := range a.Advice(ro) {
		fmt.Fprintln(out, l)
	}
	return nil
}

func newRetryCommand(o *options) *cobra.Command {
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "retry ROLLOUT",
		Short: "Release an aborted revision again, from step 1",
		Long: `Release the revision whose release was aborted again, from step 1, against
the same stable revision. The command writes the annotation sluice.dev/retry,
pinned to the aborted revision; sluice's admission webhook records who wrote
it, and sluice records the retry beside the approvals.`,
		Example:           `  kubectl sluice retry web -n shop`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			return runRetry(cmd.Context(), s, o.streams.Out, ro, w)
		}),
	}
	w.add(cmd, "the release is at step 1 again")
	return cmd
}

func runRetry(ctx context.Context, s *session, out io.Writer, ro *rolloutsv1beta1.Rollout, w waitFlags) error {
	a, ok := progress.AbortOf(ro)
	if !ok {
		return fmt.Errorf("rollout %s has no aborted release (phase %s): nothing to retry", progress.Ref(ro), ro.Status.Phase)
	}
	now := time.Now().UTC()
	if err := writeRequest(ctx, s, ro, rolloutsv1beta1.RetryAnnotation, abort.Request{Revision: a.Revision, Via: via, At: &now}); err != nil {
		return err
	}
	fmt.Fprintf(out, "rollout %s: retry of revision %s requested (%s)\n", progress.Ref(ro), a.Revision, rolloutsv1beta1.RetryAnnotation)
	if !w.wait {
		return nil
	}
	got, err := waitFor(ctx, s, ro.Name, w.timeout, func(r *rolloutsv1beta1.Rollout) bool {
		_, aborted := progress.AbortOf(r)
		return !aborted && r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing
	})
	if err != nil {
		return fmt.Errorf("rollout %s did not start again within %s (%s); see %s: %w",
			progress.Ref(ro), w.timeout, got.Status.Message, progress.Command(ro, "status"), err)
	}
	fmt.Fprintf(out, "rollout %s: releasing revision %s again from step 1; follow it with %s\n",
		progress.Ref(ro), a.Revision, progress.Command(ro, "status", "--watch"))
	return nil
}

// writeRequest writes req into the annotation key of ro.
func writeRequest(ctx context.Context, s *session, ro *rolloutsv1beta1.Rollout, key string, req abort.Request) error {
	if err := s.patchRollout(ctx, ro, abort.Patch(key, req)); err != nil {
		return fmt.Errorf("writing %s on rollout %s: %w", key, progress.Ref(ro), err)
	}
	return nil
}

// waitFor reads the Rollout name until done holds, for at most timeout;
// it returns the last read.
func waitFor(ctx context.Context, s *session, name string, timeout time.Duration, done func(*rolloutsv1beta1.Rollout) bool) (*rolloutsv1beta1.Rollout, error) {
	var last *rolloutsv1beta1.Rollout
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := s.rollout(ctx, name)
		if err != nil {
			return false, err
		}
		last = got
		return done(got), nil
	})
	if last == nil {
		last = &rolloutsv1beta1.Rollout{}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("timed out: %w", err)
	}
	return last, err
}

// workload reads ro's workload as an unstructured object.
func (s *session) workload(ctx context.Context, ro *rolloutsv1beta1.Rollout) (*unstructured.Unstructured, error) {
	ref := ro.Spec.WorkloadRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("rollout %s: spec.workloadRef.apiVersion %q: %w", progress.Ref(ro), ref.APIVersion, err)
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(gv.WithKind(ref.Kind))
	switch err := s.c.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}, w); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s %s/%s of rollout %s does not exist", ref.Kind, ro.Namespace, ref.Name, progress.Ref(ro))
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ro.Namespace, ref.Name, err)
	}
	return w, nil
}
