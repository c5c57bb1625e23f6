// Package notification reconciles Notifiers: for each Rollout a Notifier
// binds, it works out the transitions its release went through (from the
// Rollout's status and annotations, the MetricGates and the GitGates bound
// to it), queues each new one in the Notifier's status, and delivers the
// queue to the sinks, retrying with back-off.
//
// Delivery is at least once: a notification is recorded in the outbox (a
// status patch under the resourceVersion read) before it is sent, and taken
// out only after every sink accepted it; a manager that stops in between
// sends it again, under the same key. The notifier reads releases and never
// writes a Rollout: a slow or failing sink delays notifications, never a
// release.
package notification

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/notification/sinks"
)

// FieldManager is the field manager of sluice's writes for Notifiers.
const FieldManager = "sluice-notification"

// Reconciler reconciles Notifiers.
type Reconciler struct {
	// Client reads Rollouts and gates through the manager's cache and
	// patches the Notifiers' status.
	Client client.Client
	// APIReader reads the Notifiers uncached.
	APIReader client.Reader
	// Recorder emits events.
	Recorder events.EventRecorder
	// Clock tells time.
	Clock clock.PassiveClock
	// Sinks builds the sinks.
	Sinks sinks.Deps
}

// +kubebuilder:rbac:groups=notification.sluice.dev,resources=notifiers,verbs=get;list;watch
// +kubebuilder:rbac:groups=notification.sluice.dev,resources=notifiers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=analysis.sluice.dev,resources=metricgates,verbs=get;list;watch
// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("notifier").
		For(&notificationv1alpha1.Notifier{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&rolloutsv1beta1.Rollout{}, handler.EnqueueRequestsFromMapFunc(r.notifiersOfRollout)).
		Watches(&analysisv1alpha1.MetricGate{}, handler.EnqueueRequestsFromMapFunc(r.notifiersOfNamespace)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

// Reconcile queues the new transitions of the bound Rollouts' releases,
// then delivers what is due.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Uncached: the status holds the outbox, and a stale copy would queue
	// (and send) a transition again only to lose the write.
	n := &notificationv1alpha1.Notifier{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, n); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !n.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	base := n.DeepCopy()
	if v, ok := meta.ReconcileAnnotationValue(n.GetAnnotations()); ok {
		n.Status.LastHandledReconcileAt = v
	}
	if err := r.reconcileQueue(ctx, n); err != nil {
		setFailed(n, meta.ReconciliationFailedReason, err.Error())
		return ctrl.Result{}, r.patchStatus(ctx, base, n)
	}
	n.Status.Pending = int32(len(n.Status.Outbox)) //nolint:gosec // bounded by maxOutbox
	// The queue is written before anything is sent.
	if err := r.patchStatus(ctx, base, n); err != nil {
		return ctrl.Result{}, err
	}
	base = n.DeepCopy()
	if n.Spec.Suspend {
		setReady(n, metav1.ConditionFalse, meta.SuspendedReason, fmt.Sprintf("suspended: %d notification(s) wait", len(n.Status.Outbox)))
		return ctrl.Result{}, r.patchStatus(ctx, base, n)
	}
	next := r.reconcileDelivery(ctx, n)
	n.Status.Pending = int32(len(n.Status.Outbox)) //nolint:gosec // bounded by maxOutbox
	setReady(n, metav1.ConditionTrue, meta.SucceededReason,
		fmt.Sprintf("%d rollout(s) bound, %d notification(s) waiting", n.Status.BoundRollouts, len(n.Status.Outbox)))
	if err := r.patchStatus(ctx, base, n); err != nil {
		return ctrl.Result{}, err
	}
	var res ctrl.Result
	if !next.IsZero() {
		res.RequeueAfter = max(next.Sub(r.Clock.Now()), 100*time.Millisecond)
	}
	return res, nil
}

// patchStatus writes n's status if it changed, on the condition that n is
// still the one read.
func (r *Reconciler) patchStatus(ctx context.Context, base, n *notificationv1alpha1.Notifier) error {
	n.Status.ObservedGeneration = n.Generation
	if apiequality.Semantic.DeepEqual(base.Status, n.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, n, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
	if err != nil {
		return fmt.Errorf("patching notifier status: %w", err)
	}
	return nil
}
