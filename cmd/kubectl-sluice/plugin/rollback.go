package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload/revisions"
)

func newRollbackCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "rollback ROLLOUT",
		Aliases: []string{"abort"},
		Short:   "Roll a Rollout's release back to the stable revision at once",
		Long: `Roll a Rollout's release back to the stable revision: set the workload's pod
template back to the stable revision's (for a Deployment, the template of the
ReplicaSet of that pod-template-hash; for StatefulSets, DaemonSets, OpenKruise
workloads and StatefulSet-like kinds, the template of the ControllerRevision
of that revision). sluice sees the template go back and rolls the release
back at once (through the steps when the Rollout has
rollouts.kruise.io/rollback-in-batch). abort is the same command.`,
		Example: `  kubectl sluice rollback web -n shop
  kubectl sluice abort web -n shop`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.session()
			if err != nil {
				return err
			}
			ro, err := s.rollout(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return runRollback(cmd.Context(), s, o.streams.Out, ro)
		},
	}
}

func runRollback(ctx context.Context, s *session, out io.Writer, ro *rolloutsv1beta1.Rollout) error {
	p, ok := progress.Of(ro)
	if !ok || !progress.InRelease(ro) {
		return fmt.Errorf("rollout %s has no release in progress (phase %s): nothing to roll back; to go back to an older revision, set the pod template of %s %s to it, which starts a new release",
			progress.Ref(ro), ro.Status.Phase, ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name)
	}
	stable := p.Common.StableRevision
	if stable == "" {
		return fmt.Errorf("rollout %s does not name its stable revision yet: retry in a moment (%s)", progress.Ref(ro), progress.Command(ro, "status"))
	}
	w, err := s.workload(ctx, ro)
	if err != nil {
		return err
	}
	revs, err := revisions.List(ctx, s.c, w, w.GroupVersionKind())
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s %s/%s", w.GetKind(), w.GetNamespace(), w.GetName())
	rev, found := revisions.Find(revs, stable)
	if !found || rev.Template == nil {
		kept := revisions.KeptIn(w.GroupVersionKind())
		return fmt.Errorf("cannot roll back rollout %s: no %s of %s holds the pod template of the stable revision %s; set the template back by hand (apply the previous manifest, or revert the change in Git)",
			progress.Ref(ro), kept, what, stable)
	}
	current, err := revisions.TemplateOf(w)
	if err != nil {
		return fmt.Errorf("cannot roll back rollout %s: %s: %w", progress.Ref(ro), what, err)
	}
	changes := revisions.Changes(current, rev.Template)
	if len(changes) == 0 {
		fmt.Fprintf(out, "rollout %s: the pod template of %s already is the stable revision %s: nothing changed; sluice is rolling back (%s)\n",
			progress.Ref(ro), what, stable, progress.Command(ro, "status", "--watch"))
		return nil
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": w.GetResourceVersion()},
		{"op": "replace", "path": "/spec/template", "value": rev.Template},
	})
	if err != nil {
		return err
	}
	if err := s.c.Patch(ctx, w, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
			return fmt.Errorf("%s changed while rolling back rollout %s: run the command again: %w", what, progress.Ref(ro), err)
		}
		return fmt.Errorf("setting the pod template of %s back: %w", what, err)
	}
	fmt.Fprintf(out, "rollout %s: rolled %s back to the stable revision %s (pod template of %s %s, revision #%d):\n",
		progress.Ref(ro), what, stable, rev.Kind, rev.Name, rev.Number)
	for _, c := range changes {
		fmt.Fprintf(out, "  %s\n", c)
	}
	how := "at once"
	if ro.Annotations[rolloutsv1beta1.RollbackInBatchAnnotation] != "" {
		how = "through the steps (" + rolloutsv1beta1.RollbackInBatchAnnotation + ")"
	}
	fmt.Fprintf(out, "sluice rolls the release back %s; follow it with %s\n", how, progress.Command(ro, "status", "--watch"))
	fmt.Fprintf(out, "If a GitOps tool applies %s, revert the change in Git too, or it sets the new revision again.\n", what)
	return nil
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
