package rollout

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/dynamicwatch"
	"github.com/sluice-dev/sluice/controllers/settle"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// WorkloadIndex indexes Rollouts by the workload they release, as
// "<Kind>/<name>".
const WorkloadIndex = "spec.workloadRef"

// RoutesIndex indexes Rollouts, and TrafficRoutings, by the objects their
// traffic goes through, as "<Kind>/<name>": the Services, Ingresses and
// HTTPRoutes they name and those sluice creates beside them, and (for
// Rollouts) the TrafficRouting they name.
const RoutesIndex = "spec.trafficRoutings"

// SetupWithManager registers the controller, its index and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &rolloutsv1beta1.Rollout{}, WorkloadIndex, func(o client.Object) []string {
		ro := o.(*rolloutsv1beta1.Rollout)
		return []string{ro.Spec.WorkloadRef.Kind + "/" + ro.Spec.WorkloadRef.Name}
	}); err != nil {
		return err
	}
	if err := r.indexRoutes(ctx, mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&rolloutsv1beta1.Rollout{}).
		Watches(&rolloutsv1beta1.BatchRelease{}, settle.Delayed(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &rolloutsv1beta1.Rollout{}, handler.OnlyControllerOwner())))
	for _, k := range kinds.Watched() {
		b = b.Watches(k.Watch(), settle.Delayed(handler.EnqueueRequestsFromMapFunc(r.forWorkload(k.GroupKind.Kind))))
	}
	b = b.
		WatchesRawSource(dynamicwatch.Workloads(mgr.GetCache(), r.forWorkload)).
		WatchesRawSource(dynamicwatch.Definitions(mgr.GetCache(), mgr.GetClient())).
		Watches(&rolloutsv1alpha1.TrafficRouting{}, handler.EnqueueRequestsFromMapFunc(r.forRoute("TrafficRouting"))).
		Watches(&analysisv1alpha1.MetricGate{}, handler.EnqueueRequestsFromMapFunc(r.forMetricGate))
	for _, w := range providers.Watches() {
		h := handler.EnqueueRequestsFromMapFunc(r.forRoute(w.GVK.Kind))
		if w.ServedLater {
			b = b.WatchesRawSource(&servedLater{cache: mgr.GetCache(), mapper: mgr.GetRESTMapper(), gvk: w.GVK, handler: h})
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(w.GVK)
		b = b.Watches(obj, h)
	}
	return b.Named("rollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;update;patch

// forWorkload maps a workload of kind to the Rollouts that name it.
func (r *Reconciler) forWorkload(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		list := &rolloutsv1beta1.RolloutList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{WorkloadIndex: kind + "/" + o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Rollouts for a workload event")
			return nil
		}
		reqs := make([]ctrl.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// indexRoutes registers RoutesIndex for Rollouts and TrafficRoutings.
func (r *Reconciler) indexRoutes(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &rolloutsv1beta1.Rollout{}, RoutesIndex, func(o client.Object) []string {
		ro := o.(*rolloutsv1beta1.Rollout)
		keys := providers.Keys(ro.Spec.Strategy.TrafficRoutings())
		if name := ro.TrafficRoutingRef(); name != "" {
			keys = append(keys, providers.Key("TrafficRouting", name))
		}
		return keys
	}); err != nil {
		return err
	}
	return mgr.GetFieldIndexer().IndexField(ctx, &rolloutsv1alpha1.TrafficRouting{}, RoutesIndex, func(o client.Object) []string {
		tr := o.(*rolloutsv1alpha1.TrafficRouting)
		refs := make([]rolloutsv1beta1.TrafficRoutingRef, 0, len(tr.Spec.ObjectRef))
		for _, e := range tr.Spec.ObjectRef {
			refs = append(refs, e.V1beta1())
		}
		return providers.Keys(refs)
	})
}

// forRoute maps an object of kind that traffic goes through to the
// Rollouts that route through it, directly or through a TrafficRouting.
func (r *Reconciler) forRoute(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		key := providers.Key(kind, o.GetName())
		keys := []string{key}
		if kind != "TrafficRouting" {
			trs := &rolloutsv1alpha1.TrafficRoutingList{}
			if err := r.Client.List(ctx, trs, client.InNamespace(o.GetNamespace()), client.MatchingFields{RoutesIndex: key}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing TrafficRoutings for a route event")
			}
			for i := range trs.Items {
				keys = append(keys, providers.Key("TrafficRouting", trs.Items[i].Name))
			}
		}
		var reqs []ctrl.Request
		for _, k := range keys {
			list := &rolloutsv1beta1.RolloutList{}
			if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{RoutesIndex: k}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing Rollouts for a route event")
				return nil
			}
			for i := range list.Items {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return reqs
	}
}
