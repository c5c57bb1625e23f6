package batchrelease

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/dynamicwatch"
	"github.com/sluice-dev/sluice/controllers/settle"
	"github.com/sluice-dev/sluice/workload/canarydeployment"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// WorkloadIndex indexes BatchReleases by the workload they release, as
// "<Kind>/<name>".
const WorkloadIndex = "spec.workloadRef"

// Workloads of the partition kinds (workload/partition); OpenKruise and
// custom kinds are watched once a Rollout names them (dynamicwatch), and
// custom kinds need these rights granted for their own group.
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets;daemonsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// SetupWithManager registers the controller, its index and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &rolloutsv1beta1.BatchRelease{}, WorkloadIndex, func(o client.Object) []string {
		br := o.(*rolloutsv1beta1.BatchRelease)
		return []string{br.Spec.WorkloadRef.Kind + "/" + br.Spec.WorkloadRef.Name}
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&rolloutsv1beta1.BatchRelease{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionPredicate())))
	for _, k := range kinds.Watched() {
		b = b.Watches(k.Watch(), settle.Delayed(handler.EnqueueRequestsFromMapFunc(r.forWorkload(k.GroupKind.Kind))))
	}
	for _, d := range kinds.Dependents() {
		b = b.Watches(d.Object(), settle.Delayed(handler.EnqueueRequestsFromMapFunc(r.forController(d.Controllers))))
	}
	return b.
		Watches(&appsv1.Deployment{}, settle.Delayed(handler.EnqueueRequestsFromMapFunc(r.forCanaryDeployment))).
		WatchesRawSource(dynamicwatch.Workloads(mgr.GetCache(), r.forWorkload)).
		Named("batchrelease").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// forWorkload maps a workload of kind to the BatchReleases releasing it.
func (r *Reconciler) forWorkload(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		return r.requestsFor(ctx, o.GetNamespace(), kind+"/"+o.GetName())
	}
}

// Pods are watched for the DaemonSets (kinds.Dependents).
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// forController maps an object (a workload's dependent) to the
// BatchReleases releasing the workload that controls it, when that is of
// one of the kinds controllers.
func (r *Reconciler) forController(controllers []schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		ref := metav1.GetControllerOf(o)
		if ref == nil {
			return nil
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || !slices.Contains(controllers, schema.GroupKind{Group: gv.Group, Kind: ref.Kind}) {
			return nil
		}
		return r.requestsFor(ctx, o.GetNamespace(), ref.Kind+"/"+ref.Name)
	}
}

// forCanaryDeployment maps a canary Deployment (Canary style) to the
// BatchReleases releasing the stable Deployment its label names.
func (r *Reconciler) forCanaryDeployment(ctx context.Context, o client.Object) []ctrl.Request {
	stable := o.GetLabels()[canarydeployment.Label]
	if stable == "" {
		return nil
	}
	return r.requestsFor(ctx, o.GetNamespace(), "Deployment/"+stable)
}

func (r *Reconciler) requestsFor(ctx context.Context, namespace, key string) []ctrl.Request {
	list := &rolloutsv1beta1.BatchReleaseList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{WorkloadIndex: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing BatchReleases for a workload event", "workload", key)
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// deletionPredicate passes updates that set a deletion timestamp.
func deletionPredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
