package rollout

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/dynamicwatch"
)

// WorkloadIndex indexes Rollouts by the workload they release, as
// "<Kind>/<name>".
const WorkloadIndex = "spec.workloadRef"

// SetupWithManager registers the controller, its index and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &rolloutsv1beta1.Rollout{}, WorkloadIndex, func(o client.Object) []string {
		ro := o.(*rolloutsv1beta1.Rollout)
		return []string{ro.Spec.WorkloadRef.Kind + "/" + ro.Spec.WorkloadRef.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&rolloutsv1beta1.Rollout{}).
		Owns(&rolloutsv1beta1.BatchRelease{}).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("Deployment"))).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("StatefulSet"))).
		WatchesRawSource(dynamicwatch.Workloads(mgr.GetCache(), r.forWorkload)).
		WatchesRawSource(dynamicwatch.Definitions(mgr.GetCache(), mgr.GetClient())).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("DaemonSet"))).
		Named("rollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;update;patch

// forWorkload maps a workload of kind to the Rollouts that name it.
func (r *Reconciler) forWorkload(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &rolloutsv1beta1.RolloutList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{WorkloadIndex: kind + "/" + o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Rollouts for a workload event")
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}
