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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/workload"
)

// Reconciler reconciles Rollouts.
type Reconciler struct {
	// Client reads from the cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server, for the reads that decide what
	// to write.
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
}

// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts/finalizers,verbs=update
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=batchreleases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one Rollout forward.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ro := &rolloutsv1beta1.Rollout{}
	// Read fresh: a stale Rollout would repeat or undo a step.
	if err := r.APIReader.Get(ctx, req.NamespacedName, ro); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	logger := log.FromContext(ctx).WithValues("rollout", klog.KObj(ro))
	ctx = log.IntoContext(ctx, logger)

	deleting := !ro.DeletionTimestamp.IsZero()
	if deleting && !controllerutil.ContainsFinalizer(ro, rolloutsv1beta1.RolloutFinalizer) {
		return reconcile.Result{}, nil
	}
	if !deleting && !controllerutil.ContainsFinalizer(ro, rolloutsv1beta1.RolloutFinalizer) {
		if err := r.addFinalizer(ctx, ro); err != nil {
			return reconcile.Result{}, err
		}
	}

	missingRouting, err := r.resolveRoutingRef(ctx, ro)
	if err != nil {
		return reconcile.Result{}, err
	}
	s, err := r.observe(ctx, ro)
	if err != nil {
		return reconcile.Result{}, err
	}
	// A Rollout whose TrafficRouting does not exist yet (a GitOps tool may
	// apply it later) holds a new revision until it does.
	s.obs.Waiting = missingRouting
	toCanaryView(ro)
	r.observeTraffic(ctx, s)
	status, actions := canary.Next(ro, s.obs)
	fromCanaryView(ro, &status)
	ro.Status = status
	actErr := r.act(ctx, s, actions)
	if err := r.patchStatus(ctx, s); err != nil {
		return reconcile.Result{}, errors.Join(actErr, err)
	}
	r.Metrics.Observe(ctx, s.base, ro, actions)
	if actErr != nil {
		return reconcile.Result{}, actErr
	}
	if err := r.holdRoutingRef(ctx, ro, releasing(ro, actions.RemoveFinalizer)); err != nil {
		return reconcile.Result{}, err
	}
	if actions.RemoveFinalizer {
		if err := r.removeFinalizer(ctx, s); err != nil {
			return reconcile.Result{}, fmt.Errorf("removing finalizer: %w", err)
		}
	}
	return reconcile.Result{RequeueAfter: actions.RequeueAfter}, nil
}
