package notification

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

// notifiersOfRollout maps a Rollout to the Notifiers of its namespace that
// bind it.
func (r *Reconciler) notifiersOfRollout(ctx context.Context, obj client.Object) []ctrl.Request {
	list := &notificationv1alpha1.NotifierList{}
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

// notifiersOfNamespace maps an object (a MetricGate whose verdicts
// changed) to every Notifier of its namespace.
func (r *Reconciler) notifiersOfNamespace(ctx context.Context, obj client.Object) []ctrl.Request {
	list := &notificationv1alpha1.NotifierList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	out := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
