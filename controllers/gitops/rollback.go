package gitops

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// rollback sets the pod template of ro's workload back to the stable
// revision's, as kubectl sluice rollback does: sluice's Rollout controller
// sees the template go back and rolls the release back. The stable template
// is the one of the ReplicaSet of a Deployment, or of the ControllerRevision
// of any other kind, that holds the stable revision.
func (r *Reconciler) rollback(ctx context.Context, ro *rolloutsv1beta1.Rollout, stable string) error {
	if stable == "" {
		return fmt.Errorf("rollout %s/%s names no stable revision yet", ro.Namespace, ro.Name)
	}
	w, err := r.workload(ctx, ro)
	if err != nil {
		return err
	}
	gvk := w.GroupVersionKind()
	revs, err := revisions.List(ctx, r.APIReader, w, gvk)
	if err != nil {
		return err
	}
	rev, found := revisions.Find(revs, stable)
	if !found || rev.Template == nil {
		return fmt.Errorf("no %s of %s %s holds the pod template of the stable revision %s; revert the commit in Git instead",
			revisions.KeptIn(gvk), gvk.Kind, w.GetName(), stable)
	}
	current, err := revisions.TemplateOf(w)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, w.GetName(), err)
	}
	if revisions.Equal(current, rev.Template) {
		return nil // already back
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": w.GetResourceVersion()},
		{"op": "replace", "path": "/spec/template", "value": rev.Template},
	})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, w, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("setting the pod template of %s %s back: %w", gvk.Kind, w.GetName(), err)
	}
	return nil
}
