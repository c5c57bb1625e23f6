package gitops

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// rollback sets the pod template of ro's workload back to the stable
// revision's, as kubectl sluice rollback does: sluice's Rollout controller
// sees the template go back and rolls the release back at once. Only
// Deployments are supported here: their stable template is the template of
// the ReplicaSet whose pod-template-hash is the stable revision.
func (r *Reconciler) rollback(ctx context.Context, ro *rolloutsv1beta1.Rollout, stable string) error {
	ref := ro.Spec.WorkloadRef
	if ref.Kind != "Deployment" || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
		return fmt.Errorf("rolling back a %s from Git is not supported yet; revert the commit in Git instead", ref.Kind)
	}
	if stable == "" {
		return fmt.Errorf("rollout %s/%s names no stable revision yet", ro.Namespace, ro.Name)
	}
	d := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}, d); err != nil {
		return fmt.Errorf("reading deployment %s: %w", ref.Name, err)
	}
	sets := &appsv1.ReplicaSetList{}
	if err := r.APIReader.List(ctx, sets, client.InNamespace(ro.Namespace),
		client.MatchingLabels{appsv1.DefaultDeploymentUniqueLabelKey: stable}); err != nil {
		return fmt.Errorf("listing replicasets: %w", err)
	}
	var tpl any
	for i := range sets.Items {
		rs := &sets.Items[i]
		if owner := metav1.GetControllerOf(rs); owner == nil || owner.UID != d.UID {
			continue
		}
		t := rs.Spec.Template.DeepCopy()
		delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		if apiequality.Semantic.DeepEqual(t, &d.Spec.Template) {
			return nil // already back
		}
		tpl = t
	}
	if tpl == nil {
		return fmt.Errorf("no replicaset of deployment %s holds the stable revision %s", ref.Name, stable)
	}
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": d.ResourceVersion},
		{"op": "replace", "path": "/spec/template", "value": tpl},
	})
	if err := r.Client.Patch(ctx, d, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("setting the pod template of deployment %s back: %w", ref.Name, err)
	}
	return nil
}
