// Package analysis reconciles MetricGates: for each Rollout a MetricGate
// binds, it reads the Rollout's status (never writing it), starts a run when
// the release reaches a step the gate analyses (or, for a background gate,
// when the release starts), takes each metric's measurements on their
// interval through the metric providers, and records the measurements and
// the run's verdict in the gate's status, where the Rollout's step machine
// reads it.
//
// Restart safety: a measurement is recorded under its index, in a status
// patch that carries the resourceVersion the gate was read at; it counts
// only once that patch succeeded, and an index already recorded is never
// taken again. A manager that stops between taking a measurement and
// recording it takes it again (a Job's, by its name, is found again rather
// than started twice); none is lost or counted twice. Events are emitted
// only after the patch that recorded what they report.
package analysis

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

	"github.com/sluice-dev/sluice/analysis/condition"
	"github.com/sluice-dev/sluice/analysis/providers"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// FieldManager is the field manager of sluice's writes for MetricGates.
const FieldManager = "sluice-analysis"

// pendingRecheck is how soon a measurement still being taken (a Job
// running) is looked at again when no watch event comes first.
const pendingRecheck = 10 * time.Second

// Reconciler reconciles MetricGates.
type Reconciler struct {
	// Client reads Rollouts and Jobs through the manager's cache and
	// patches the gates' status.
	Client client.Client
	// APIReader reads the gates uncached.
	APIReader client.Reader
	// Recorder emits events.
	Recorder events.EventRecorder
	// Clock tells time.
	Clock clock.PassiveClock
	// Providers take the measurements.
	Providers *providers.Set
	// Conditions compiles the metrics' conditions.
	Conditions *condition.Compiler
	// Workers is how many gates are reconciled at once (default 2).
	Workers int
}

// +kubebuilder:rbac:groups=analysis.sluice.dev,resources=metricgates,verbs=get;list;watch
// +kubebuilder:rbac:groups=analysis.sluice.dev,resources=metricgates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	workers := r.Workers
	if workers <= 0 {
		workers = 2
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("metricgate").
		For(&analysisv1alpha1.MetricGate{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&rolloutsv1beta1.Rollout{}, handler.EnqueueRequestsFromMapFunc(r.gatesOfRollout)).
		Owns(&batchv1.Job{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// scope is what one reconciliation of a gate works on.
type scope struct {
	gate     *analysisv1alpha1.MetricGate
	rollouts []rolloutsv1beta1.Rollout
	// events are emitted once the status that records them is written.
	events []event
	// requeue is the soonest a measurement is due (0: none).
	requeue time.Duration
}

type event struct {
	on             client.Object
	typ, reason    string
	action, format string
	args           []any
}

func (s *scope) wakeIn(d time.Duration) {
	if d <= 0 {
		d = time.Second
	}
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

// Reconcile measures what is due for the Rollouts one gate binds.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	// Uncached: the status holds the measurements, and a stale copy would
	// take a measurement again only to lose it at the patch's precondition.
	gate := &analysisv1alpha1.MetricGate{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, gate); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !gate.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its Jobs are owned: the garbage collector takes them
	}
	base := gate.DeepCopy()
	s := &scope{gate: gate}
	defer func() {
		if err := r.patchStatus(ctx, base, gate); err != nil {
			res, retErr = ctrl.Result{}, err
			return
		}
		r.emit(s)
	}()
	if v, ok := meta.ReconcileAnnotationValue(gate.GetAnnotations()); ok {
		gate.Status.LastHandledReconcileAt = v
	}
	if gate.Spec.Suspend {
		setReady(gate, metav1.ConditionFalse, meta.SuspendedReason, "the gate is suspended: nothing is measured")
		return ctrl.Result{}, nil
	}
	for _, phase := range []func(context.Context, *scope) error{r.gather, r.reconcileRollouts} {
		if err := phase(ctx, s); err != nil {
			setFailed(gate, meta.ReconciliationFailedReason, err.Error())
			return ctrl.Result{}, err
		}
	}
	setReady(gate, metav1.ConditionTrue, meta.SucceededReason, summary(gate))
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

// patchStatus writes the gate's status if it changed, on the condition
// that the gate is still the one read.
func (r *Reconciler) patchStatus(ctx context.Context, base, gate *analysisv1alpha1.MetricGate) error {
	gate.Status.ObservedGeneration = gate.Generation
	if apiequality.Semantic.DeepEqual(base.Status, gate.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, gate, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
	if err != nil {
		return fmt.Errorf("patching metricgate status: %w", err)
	}
	return nil
}

// emit records the scope's events.
func (r *Reconciler) emit(s *scope) {
	for _, e := range s.events {
		r.Recorder.Eventf(e.on, nil, e.typ, e.reason, e.action, e.format, e.args...)
	}
}

// summary is the Ready message: how many Rollouts, how many runs live.
func summary(gate *analysisv1alpha1.MetricGate) string {
	live := 0
	for _, ra := range gate.Status.Rollouts {
		for _, run := range ra.Runs {
			if run.FinishedAt == nil {
				live++
			}
		}
	}
	return fmt.Sprintf("%d rollout(s) bound, %d analysis run(s) in progress", gate.Status.BoundRollouts, live)
}

// warning reports whether a verdict deserves a Warning event.
func warning(v analysisv1alpha1.Verdict) string {
	if v == analysisv1alpha1.VerdictPassed {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}
