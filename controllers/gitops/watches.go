package gitops

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// gatesOfRollout maps a Rollout to the GitGates of its namespace that bind it.
func (r *Reconciler) gatesOfRollout(ctx context.Context, obj client.Object) []ctrl.Request {
	// Shared with the cache, not copied (a gate's status holds every bound
	// Rollout's record, and every change of a Rollout comes here): only
	// read.
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range list.Items {
		if list.Items[i].Binds(obj.GetLabels()) {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
