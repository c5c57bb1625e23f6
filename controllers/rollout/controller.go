// Package rollout runs the Rollout controller: for each Rollout it observes
// the workload and the BatchRelease, asks the pure step machine
// (release/canary) what comes next, carries out the actions and writes the
// status.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/spacing"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/workload"
)

// Reconciler reconciles Rollouts.
type Reconciler struct {
	// Client reads from the cache and writes to the API server. The
	// manager records its writes (internal/ownwrites), so that APIReader
	// never serves a copy older than them.
	Client client.Client
	// APIReader is for the reads that decide what to write: never older
	// than the manager's own last write of the object (the manager serves
	// them from the cache once it has caught up, from the API server
	// before; a plain API reader does too).
	APIReader client.Reader
	// Recorder records events on Rollouts.
	Recorder events.EventRecorder
	// Clock is the time source.
	Clock clock.PassiveClock
	// ProgressDeadline is how long a step may take to get its pods ready
	// before the Rollout reports Stalled, unless the Rollout's
	// sluice.dev/progress-deadline says otherwise; 0 waits forever.
	ProgressDeadline time.Duration
	// KeepHeldOnDeletion keeps workloads held when their Rollout is deleted
	// mid-release, unless the Rollout's annotation says otherwise.
	KeepHeldOnDeletion bool
	// Workers is how many objects are reconciled at once.
	Workers int
	// Workloads returns the adapter for a workload reference.
	Workloads workload.Factory
	// Metrics records each status transition (nil records nothing).
	Metrics *metrics.RolloutObserver
	// Namespace is the manager's own namespace, where the Lua scripts of
	// custom traffic routes are read; empty means lua.DefaultNamespace.
	Namespace string

	// once remembers the once-only events recorded.
	once onceEvents
	// progress spaces out status writes of pod counts alone.
	progress spacing.Writes
}

// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts/finalizers,verbs=update
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=batchreleases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one Rollout forward, in phases: observe (the workload,
// its BatchRelease, the approvals), traffic (Services and routes made to
// carry what the release says), step (the pure step machine) and act (its
// actions). The status is patched once, in a deferred step (finish): an
// error in any phase reaches it, and the generation counts as observed only
// when every phase succeeded.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	ro := &rolloutsv1beta1.Rollout{}
	// Never older than our own last write: a Rollout older than the status
	// just written would repeat or undo a step. A write by someone else not
	// seen yet makes the status patch conflict, and the next read is fresh.
	// A cache behind our own write is waited for rather than read around.
	if err := r.APIReader.Get(ownwrites.CacheOnly(ctx), req.NamespacedName, ro); err != nil {
		if errors.Is(err, ownwrites.ErrBehind) {
			return ctrl.Result{RequeueAfter: ownwrites.BehindRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger := ctrl.LoggerFrom(ctx).WithValues("rollout", klog.KObj(ro))
	ctx = log.IntoContext(ctx, logger)

	deleting := !ro.DeletionTimestamp.IsZero()
	if deleting && !controllerutil.ContainsFinalizer(ro, rolloutsv1beta1.RolloutFinalizer) {
		return ctrl.Result{}, nil
	}
	if !deleting && !controllerutil.ContainsFinalizer(ro, rolloutsv1beta1.RolloutFinalizer) {
		if err := r.addFinalizer(ctx, ro); err != nil {
			return ctrl.Result{}, err
		}
	}

	s := &scope{ro: ro, base: ro.DeepCopy()}
	defer func() { result, err = r.finish(ctx, s, result, err) }()
	for _, p := range []struct {
		name string
		run  func(context.Context, *scope) (ctrl.Result, error)
	}{
		{"Observe", r.reconcileObserve}, {"Traffic", r.reconcileTraffic}, {"Step", r.reconcileStep}, {"Act", r.reconcileAct},
	} {
		if result, err = p.run(ctx, s); err != nil {
			return result, &phaseError{phase: p.name, err: err}
		}
	}
	return result, nil
}

// reconcileObserve gathers what the step machine reads into s.
func (r *Reconciler) reconcileObserve(ctx context.Context, s *scope) (ctrl.Result, error) {
	missingRouting, err := r.resolveRoutingRef(ctx, s.ro)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observe(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	// A Rollout whose TrafficRouting does not exist yet (a GitOps tool may
	// apply it later) holds a new revision until it does.
	s.obs.Waiting = missingRouting
	return ctrl.Result{}, nil
}

// reconcileTraffic makes the Services and routes carry what the release
// says; what it could not do is in the observation the step reads.
func (r *Reconciler) reconcileTraffic(ctx context.Context, s *scope) (ctrl.Result, error) {
	r.observeTraffic(ctx, s)
	return ctrl.Result{}, nil
}

// reconcileStep asks the pure step machine for the next status and the
// actions that lead there.
func (r *Reconciler) reconcileStep(_ context.Context, s *scope) (ctrl.Result, error) {
	status, actions := canary.Next(s.ro, s.obs)
	s.ro.Status = status
	s.actions, s.stepped = actions, true
	return ctrl.Result{RequeueAfter: actions.RequeueAfter}, nil
}

// reconcileAct carries out the step machine's actions.
func (r *Reconciler) reconcileAct(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := r.act(ctx, s, s.actions); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.actions.RequeueAfter}, nil
}

// finish writes the status the phases computed, once. A failed phase keeps
// the generation unobserved and is reported in the ReconcileError
// condition (a write conflict is not a failure: the next reconcile plans
// again from a fresh read); a reconcile that succeeds removes it. Only
// after the status is written does the Rollout let go of its
// TrafficRouting and, last, of its finalizer.
func (r *Reconciler) finish(ctx context.Context, s *scope, result ctrl.Result, err error) (ctrl.Result, error) {
	if err != nil {
		s.ro.Status.ObservedGeneration = s.base.Status.ObservedGeneration
	}
	setReconcileError(&s.ro.Status, err, r.Clock.Now())
	if perr := r.patchStatus(ctx, s); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if s.stepped {
		r.Metrics.Observe(ctx, s.base, s.ro, s.actions)
	}
	if errors.Is(err, ownwrites.ErrBehind) {
		// An object the reconcile reads (its BatchRelease) is behind
		// sluice's own write in the cache: come back once it caught up.
		return ctrl.Result{RequeueAfter: ownwrites.BehindRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.holdRoutingRef(ctx, s.ro, releasing(s.ro, s.actions.RemoveFinalizer)); err != nil {
		return ctrl.Result{}, err
	}
	if s.actions.RemoveFinalizer {
		if err := r.removeFinalizer(ctx, s); err != nil {
			return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
		}
		r.progress.Forget(client.ObjectKeyFromObject(s.ro))
	}
	if s.deferred > 0 && (result.RequeueAfter == 0 || s.deferred < result.RequeueAfter) {
		result.RequeueAfter = s.deferred
	}
	return result, nil
}

// phaseError is the failure of a named phase of the Rollout reconcile.
type phaseError struct {
	phase string
	err   error
}

func (e *phaseError) Error() string { return e.phase + ": " + e.err.Error() }
func (e *phaseError) Unwrap() error { return e.err }
