package batchrelease

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/dynamicwatch"
	"github.com/sluice-dev/sluice/workload/canarydeployment"
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
	return ctrl.NewControllerManagedBy(mgr).
		For(&rolloutsv1beta1.BatchRelease{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionPredicate()))).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("Deployment"))).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.forCanaryDeployment)).
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(r.forReplicaSetOwner)).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("StatefulSet"))).
		WatchesRawSource(dynamicwatch.Workloads(mgr.GetCache(), r.forWorkload)).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload("DaemonSet"))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.forDaemonSetPod)).
		Named("batchrelease").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// forWorkload maps a workload of kind to the BatchReleases releasing it.
func (r *Reconciler) forWorkload(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return r.requestsFor(ctx, o.GetNamespace(), kind+"/"+o.GetName())
	}
}

// forReplicaSetOwner maps a ReplicaSet to the BatchReleases releasing its
// Deployment.
func (r *Reconciler) forReplicaSetOwner(ctx context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "Deployment" {
		return nil
	}
	return r.requestsFor(ctx, o.GetNamespace(), "Deployment/"+ref.Name)
}

// forCanaryDeployment maps a canary Deployment (Canary style) to the
// BatchReleases releasing the stable Deployment its label names.
func (r *Reconciler) forCanaryDeployment(ctx context.Context, o client.Object) []reconcile.Request {
	stable := o.GetLabels()[canarydeployment.Label]
	if stable == "" {
		return nil
	}
	return r.requestsFor(ctx, o.GetNamespace(), "Deployment/"+stable)
}

// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// forDaemonSetPod maps a pod to the BatchReleases releasing the DaemonSet
// that controls it.
func (r *Reconciler) forDaemonSetPod(ctx context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "DaemonSet" || ref.APIVersion != "apps/v1" {
		return nil
	}
	return r.requestsFor(ctx, o.GetNamespace(), "DaemonSet/"+ref.Name)
}

func (r *Reconciler) requestsFor(ctx context.Context, namespace, key string) []reconcile.Request {
	list := &rolloutsv1beta1.BatchReleaseList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{WorkloadIndex: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing BatchReleases for a workload event", "workload", key)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// deletionPredicate passes updates that set a deletion timestamp.
func deletionPredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
