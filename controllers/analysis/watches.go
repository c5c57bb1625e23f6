package analysis

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// gatesOfRollout maps a Rollout to the MetricGates of its namespace that
// bind it.
func (r *Reconciler) gatesOfRollout(ctx context.Context, obj client.Object) []ctrl.Request {
	list := &analysisv1alpha1.MetricGateList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range list.Items {
		sel, err := metav1.LabelSelectorAsSelector(&list.Items[i].Spec.RolloutSelector)
		if err == nil && sel.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
