// Package trafficrouting runs the TrafficRouting controller: a
// TrafficRouting used alone makes its routes carry its own strategy; while
// Rollouts release through it (each holding a progressing finalizer) it
// leaves the routes to them; deleted, it gives the routes back.
package trafficrouting

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic/drive"
	"github.com/sluice-dev/sluice/traffic/providers"
)

// Reconciler reconciles TrafficRoutings.
type Reconciler struct {
	// Client reads from the cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server, for the reads that decide what
	// to write.
	APIReader client.Reader
	// Recorder records events on TrafficRoutings.
	Recorder events.EventRecorder
	// Workers is how many objects are reconciled at once.
	Workers int
	// Namespace is the manager's own namespace, where the Lua scripts of
	// custom traffic routes are read; empty means lua.DefaultNamespace.
	Namespace string
}

// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=trafficroutings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=trafficroutings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=trafficroutings/finalizers,verbs=update

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).For(&rolloutsv1alpha1.TrafficRouting{})
	// What it creates beside its routes (a canary Ingress): put back what
	// is changed behind its back.
	for _, w := range providers.Watches() {
		if w.Owned {
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(w.GVK)
			b = b.Owns(obj)
		}
	}
	return b.Named("trafficrouting").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// Reconcile moves the routes of one TrafficRouting towards its plan.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tr := &rolloutsv1alpha1.TrafficRouting{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, tr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, ctrl.LoggerFrom(ctx).WithValues("trafficrouting", klog.KObj(tr)))
	deleting := !tr.DeletionTimestamp.IsZero()
	if deleting && !controllerutil.ContainsFinalizer(tr, rolloutsv1alpha1.TrafficRoutingFinalizer) {
		return ctrl.Result{}, nil
	}
	if !deleting && !controllerutil.ContainsFinalizer(tr, rolloutsv1alpha1.TrafficRoutingFinalizer) {
		if err := r.setFinalizer(ctx, tr, true); err != nil {
			return ctrl.Result{}, err
		}
	}

	p := planFor(deleting, tr.Spec.Strategy, rolloutsOf(tr))
	base := tr.DeepCopy()
	done, applyErr := r.apply(ctx, tr, p.act)
	tr.Status.ObservedGeneration = tr.Generation
	switch {
	case applyErr != nil:
		tr.Status.Phase, tr.Status.Message = p.busyPhase, applyErr.Error()
	case done:
		tr.Status.Phase, tr.Status.Message = p.phase, p.message
	default:
		tr.Status.Phase, tr.Status.Message = p.busyPhase, p.busyMessage
	}
	if err := r.patchStatus(ctx, base, tr); err != nil {
		return ctrl.Result{}, err
	}
	if applyErr != nil {
		return ctrl.Result{}, fmt.Errorf("routing: %w", applyErr)
	}
	if !done {
		ctrl.LoggerFrom(ctx).Info("Routes changed", "change", p.busyMessage)
		return ctrl.Result{RequeueAfter: drive.Grace(entriesOf(tr))}, nil
	}
	if p.release {
		return ctrl.Result{}, r.setFinalizer(ctx, tr, false)
	}
	return ctrl.Result{}, nil
}

// patchStatus writes the status of tr if it changed since base, and
// records an event when the phase changed.
func (r *Reconciler) patchStatus(ctx context.Context, base, tr *rolloutsv1alpha1.TrafficRouting) error {
	if apiequality.Semantic.DeepEqual(base.Status, tr.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, tr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(rolloutsv1beta1.FieldManager))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	if base.Status.Phase != tr.Status.Phase && r.Recorder != nil {
		r.Recorder.Eventf(tr, nil, corev1.EventTypeNormal, string(tr.Status.Phase), "Route", "%s", tr.Status.Message)
	}
	return nil
}

// setFinalizer adds (or removes) the TrafficRouting's own finalizer.
func (r *Reconciler) setFinalizer(ctx context.Context, tr *rolloutsv1alpha1.TrafficRouting, add bool) error {
	base := tr.DeepCopy()
	if add {
		controllerutil.AddFinalizer(tr, rolloutsv1alpha1.TrafficRoutingFinalizer)
	} else {
		controllerutil.RemoveFinalizer(tr, rolloutsv1alpha1.TrafficRoutingFinalizer)
	}
	err := r.Client.Patch(ctx, tr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(rolloutsv1beta1.FieldManager))
	if err = client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("updating finalizers: %w", err)
	}
	return nil
}
