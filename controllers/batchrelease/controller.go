// Package batchrelease runs the BatchRelease controller: it releases a
// workload's new revision batch by batch, up to spec.releasePlan.
// batchPartition, through the workload adapter for its kind, and hands the
// workload back when the partition is removed or the BatchRelease deleted.
package batchrelease

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/spacing"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/workload"
)

// Reconciler reconciles BatchReleases.
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
	// Recorder records events on BatchReleases.
	Recorder events.EventRecorder
	// Clock is the time source.
	Clock clock.PassiveClock
	// Workers is how many objects are reconciled at once.
	Workers int
	// Workloads returns the adapter for a workload reference.
	Workloads workload.Factory

	// progress spaces out status writes of pod counts alone.
	progress spacing.Writes
}

// styleOf is the rolling style of a plan; enableExtraWorkloadForCanary
// counts only when rollingStyle is empty.
func styleOf(p rolloutsv1beta1.ReleasePlan) rolloutsv1beta1.RollingStyleType {
	switch {
	case p.RollingStyle != "":
		return p.RollingStyle
	case p.EnableExtraWorkloadForCanary:
		return rolloutsv1beta1.CanaryRollingStyle
	}
	return rolloutsv1beta1.PartitionRollingStyle
}

// pollInterval is how often a batch in flight is looked at even without
// events, as a guard against a missed watch event.
const pollInterval = 5 * time.Second

// conflictRetry is how soon a reconcile whose workload write met a
// conflict plans again.
const conflictRetry = 250 * time.Millisecond

// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=batchreleases,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=batchreleases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=batchreleases/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile drives one BatchRelease: it handles deletion and the finalizer,
// then runs the phase the release is in; the status is patched once, in a
// deferred step, whatever ended the phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	br := &rolloutsv1beta1.BatchRelease{}
	// A cache behind sluice's own last write of the BatchRelease (its
	// status, a moment ago) is waited for rather than read around.
	if err := r.APIReader.Get(ownwrites.CacheOnly(ctx), req.NamespacedName, br); err != nil {
		if errors.Is(err, ownwrites.ErrBehind) {
			return ctrl.Result{RequeueAfter: ownwrites.BehindRetry}, nil
		}
		if apierrors.IsNotFound(err) {
			r.progress.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logger := ctrl.LoggerFrom(ctx).WithValues("batchRelease", klog.KObj(br))
	ctx = log.IntoContext(ctx, logger)

	releaser, lookupErr := r.Workloads(r.Client, r.APIReader, workload.Target{
		Namespace: br.Namespace, Ref: br.Spec.WorkloadRef, Style: styleOf(br.Spec.ReleasePlan),
		PatchPodTemplateMetadata: br.Spec.ReleasePlan.PatchPodTemplateMetadata,
	})
	if !br.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, br, releaser)
	}
	if !controllerutil.ContainsFinalizer(br, rolloutsv1beta1.BatchReleaseFinalizer) {
		base := br.DeepCopy()
		controllerutil.AddFinalizer(br, rolloutsv1beta1.BatchReleaseFinalizer)
		if err := r.Client.Patch(ctx, br, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	s := &scope{br: br, base: br.DeepCopy(), releaser: releaser, now: r.Clock.Now()}
	defer func() { result, err = r.finish(ctx, s, result, err) }()
	if lookupErr != nil {
		s.br.Status.Message = lookupErr.Error()
		return ctrl.Result{}, reconcile.TerminalError(lookupErr)
	}
	return r.run(ctx, s)
}

// finish records the end of the phase in the status and patches it. The
// generation counts as observed only when the phase succeeded: a Rollout
// reads the status of a BatchRelease as the answer to its plan only then.
// A workload write that met a conflict plans again soon, from a fresh read.
func (r *Reconciler) finish(ctx context.Context, s *scope, result ctrl.Result, err error) (ctrl.Result, error) {
	switch {
	case apierrors.IsConflict(err):
		// A workload write carries the resourceVersion it was planned on:
		// the workload changed in between (a new pod template, Kubernetes'
		// own status), so the next reconcile plans again from a fresh read.
		ctrl.LoggerFrom(ctx).Info("Workload changed since it was read; planning again", "reason", err.Error())
		result, err = ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err == nil:
		s.br.Status.ObservedGeneration = s.br.Generation
	}
	if perr := r.patchStatus(ctx, s); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if s.deferred > 0 && (result.RequeueAfter == 0 || s.deferred < result.RequeueAfter) {
		result.RequeueAfter = s.deferred
	}
	return prioritized(result), err
}

// prioritized gives a requeue its place in controller-runtime's priority
// queue. A poll (pollInterval or longer) only guards against a missed
// event: watch events move a release. With 1,000 BatchReleases in flight
// their polls alone (200 a second) outnumbered what the workers could
// reconcile, and an event that carried progress (a pod ready, a new
// partition) waited seconds behind them; at low priority, polls run once
// no event is waiting. A shorter requeue (a conflict retried, a count
// write spaced, a hand-back step) is work in progress and keeps the
// normal priority, even when the reconcile was a poll.
func prioritized(result ctrl.Result) ctrl.Result {
	switch {
	case result.RequeueAfter >= pollInterval:
		result.Priority = ptr.To(handler.LowPriority)
	case result.RequeueAfter > 0:
		result.Priority = ptr.To(0)
	}
	return result
}

// run executes the phase the BatchRelease is in.
func (r *Reconciler) run(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.br.Spec.ReleasePlan.BatchPartition == nil {
		s.br.Status.StableHold = ""
		return r.reconcileFinalize(ctx, s)
	}
	ws, err := s.releaser.Status(ctx)
	if errors.Is(err, workload.ErrNotFound) {
		s.br.Status.Message = fmt.Sprintf("%s %s not found", s.br.Spec.WorkloadRef.Kind, s.br.Spec.WorkloadRef.Name)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if why := planBehind(s.br, ws); why != "" {
		// The workload moved on (a new revision, or a rollback) before the
		// plan did: acting now would release the new revision with the
		// old plan's partition. The Rollout updates the plan next.
		s.br.Status.Message = why
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	}
	if needsPreparing(s.br, ws) {
		return r.reconcilePrepare(ctx, s, ws)
	}
	if s.br.Spec.ReleasePlan.HoldStable {
		return r.reconcileHold(ctx, s, ws)
	}
	if s.br.Status.StableHold != "" {
		// The hold is over (a retry): the plan starts again at batch 0,
		// from pods that all run the stable revision.
		s.br.Status.StableHold = ""
		s.br.Status.CanaryStatus = rolloutsv1beta1.BatchReleaseCanaryStatus{CurrentBatchState: rolloutsv1beta1.UpgradingBatchState}
	}
	return r.reconcileBatch(ctx, s, ws)
}

func (r *Reconciler) reconcileDelete(ctx context.Context, br *rolloutsv1beta1.BatchRelease, releaser workload.Releaser) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(br, rolloutsv1beta1.BatchReleaseFinalizer) {
		return ctrl.Result{}, nil
	}
	if releaser != nil && br.Annotations[rolloutsv1beta1.SkipHandBackAnnotation] != "true" {
		// Deleted by hand mid-release, the BatchRelease hands the workload
		// back with the stable Service still narrowed to the old revision:
		// the Service first, or it selects no pod once Kubernetes finished.
		restored, err := r.restoreServices(ctx, br, releaser)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !restored {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		done, err := releaser.Finalize(ctx, false)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("handing the workload back: %w", err)
		}
		if !done {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		killpoint.Reached(ctx, killpoint.BatchReleaseHandedBack, br.Namespace+"/"+br.Name)
	}
	base := br.DeepCopy()
	controllerutil.RemoveFinalizer(br, rolloutsv1beta1.BatchReleaseFinalizer)
	if err := r.Client.Patch(ctx, br, client.MergeFrom(base), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
	}
	return ctrl.Result{}, nil
}
