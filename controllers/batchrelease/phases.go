package batchrelease

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/traffic/service"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
)

// scope is what one reconcile of a BatchRelease works on.
type scope struct {
	br       *rolloutsv1beta1.BatchRelease
	base     *rolloutsv1beta1.BatchRelease
	releaser workload.Releaser
	now      time.Time
	// deferred is how long a status write of pod counts alone was put
	// off (controllers/spacing).
	deferred time.Duration
}

// needsPreparing reports whether the BatchRelease must (re)claim its
// workload: it never did, it finished an earlier plan, the workload now
// carries another revision than the one it prepared for, or sluice never
// claimed it (a release OpenKruise Rollouts left in flight).
func needsPreparing(br *rolloutsv1beta1.BatchRelease, ws *workload.Status) bool {
	if ws.Adopt {
		return true
	}
	switch br.Status.Phase {
	case "", rolloutsv1beta1.RolloutPhaseInitial, rolloutsv1beta1.BatchReleasePhasePreparing,
		rolloutsv1beta1.BatchReleasePhaseCompleted, rolloutsv1beta1.BatchReleasePhaseFinalizing:
		return true
	}
	return br.Status.UpdateRevision != ws.UpdateRevision
}

// planBehind says why the BatchRelease must wait, or "": its plan names a
// release (spec.releasePlan.rolloutID, the workload's rollout ID or, without
// one, its revision, as the Rollout sets it) other than the one the
// workload now carries. A plan without a rollout ID (a BatchRelease used on
// its own) follows the workload.
func planBehind(br *rolloutsv1beta1.BatchRelease, ws *workload.Status) string {
	id := br.Spec.ReleasePlan.RolloutID
	if id == "" || ws.UpdateRevision == "" {
		return ""
	}
	current := ws.RolloutID
	if current == "" {
		current = ws.UpdateRevision
	}
	if id == current {
		return ""
	}
	return fmt.Sprintf("Waiting for the plan of release %s: spec.releasePlan.rolloutID is still %s", current, id)
}

// reconcilePrepare claims the workload and starts the plan at batch 0.
func (r *Reconciler) reconcilePrepare(ctx context.Context, s *scope, ws *workload.Status) (ctrl.Result, error) {
	br := s.br
	owner := workload.Owner{BatchRelease: br.Name, Rollout: rolloutOf(br), Ref: br.Spec.WorkloadRef}
	if err := s.releaser.Claim(ctx, owner); err != nil {
		report(&br.Status, err, err.Error())
		return ctrl.Result{}, fmt.Errorf("claiming %s %s: %w", br.Spec.WorkloadRef.Kind, br.Spec.WorkloadRef.Name, err)
	}
	killpoint.Reached(ctx, killpoint.BatchReleaseClaimed, br.Namespace+"/"+br.Name)
	ctrl.LoggerFrom(ctx).Info("Claimed workload", "updateRevision", ws.UpdateRevision, "stableRevision", ws.StableRevision)
	br.Status.Phase = rolloutsv1beta1.RolloutPhaseProgressing
	br.Status.StableRevision = ws.StableRevision
	br.Status.UpdateRevision = ws.UpdateRevision
	br.Status.ObservedRolloutID = br.Spec.ReleasePlan.RolloutID
	br.Status.ObservedWorkloadReplicas = ws.Replicas
	br.Status.ObservedReleasePlanHash = planHash(br.Spec.ReleasePlan)
	br.Status.CanaryStatus = rolloutsv1beta1.BatchReleaseCanaryStatus{CurrentBatchState: rolloutsv1beta1.UpgradingBatchState}
	if ws.UpdatedReplicas > 0 && !ws.Adopt {
		// Pods already on the revision (a rollback in batches) are not
		// part of the plan: the batches count the others. Those of a
		// release adopted from OpenKruise are the release's own.
		n := ws.UpdatedReplicas
		br.Status.CanaryStatus.NoNeedUpdateReplicas = &n
	}
	br.Status.Message = "Workload claimed; releasing batch 0"
	return ctrl.Result{RequeueAfter: pollInterval}, nil
}

// reconcileBatch moves the current batch forward, on to the next batches
// as far as the partition allows and the workload is already placed.
func (r *Reconciler) reconcileBatch(ctx context.Context, s *scope, ws *workload.Status) (ctrl.Result, error) {
	plan := s.br.Spec.ReleasePlan
	st := &s.br.Status
	if len(plan.Batches) == 0 {
		st.Message = "spec.releasePlan.batches is empty"
		return ctrl.Result{}, nil
	}
	replan(st, plan, ws)
	partition := clampPartition(plan.BatchPartition, len(plan.Batches))
	for range plan.Batches {
		cur := st.CanaryStatus.CurrentBatch
		if err := r.stepBatch(ctx, s, ws); err != nil {
			return ctrl.Result{}, err
		}
		if st.CanaryStatus.CurrentBatch == cur {
			break
		}
	}
	if err := r.labelPods(ctx, s, ws); err != nil {
		// Labels help users select a batch; they never hold up a release.
		ctrl.LoggerFrom(ctx).Error(err, "Labelling the pods of the release")
	}
	if st.CanaryStatus.CurrentBatchState == rolloutsv1beta1.ReadyBatchState && st.CanaryStatus.CurrentBatch >= partition {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: pollInterval}, nil
}

// replan restarts the current batch when the plan, the rollout ID or the
// workload's replicas changed since it was planned.
func replan(st *rolloutsv1beta1.BatchReleaseStatus, plan rolloutsv1beta1.ReleasePlan, ws *workload.Status) {
	if st.StableRevision == "" {
		st.StableRevision = ws.StableRevision
	}
	if h := planHash(plan); h != st.ObservedReleasePlanHash {
		st.ObservedReleasePlanHash = h
		st.CanaryStatus.CurrentBatch = min(st.CanaryStatus.CurrentBatch, clampPartition(plan.BatchPartition, len(plan.Batches)))
		st.CanaryStatus.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
	}
	if plan.RolloutID != st.ObservedRolloutID {
		st.ObservedRolloutID = plan.RolloutID
		// The pods that needed no update were counted when the workload
		// was claimed for its revision, which may come before the new
		// rollout ID: they still need none.
		st.CanaryStatus = rolloutsv1beta1.BatchReleaseCanaryStatus{
			CurrentBatchState:    rolloutsv1beta1.UpgradingBatchState,
			NoNeedUpdateReplicas: st.CanaryStatus.NoNeedUpdateReplicas,
		}
	}
	if ws.Replicas != st.ObservedWorkloadReplicas {
		st.ObservedWorkloadReplicas = ws.Replicas
		st.CanaryStatus.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
	}
}

// stepBatch places the current batch through the adapter and advances its
// state.
func (r *Reconciler) stepBatch(ctx context.Context, s *scope, ws *workload.Status) error {
	plan := s.br.Spec.ReleasePlan
	st := &s.br.Status
	cur := min(st.CanaryStatus.CurrentBatch, int32(len(plan.Batches)-1)) //nolint:gosec // at most 50 batches
	noNeed := noNeedUpdate(st, ws.Replicas)
	desired, err := batch.DesiredUpdated(&plan.Batches[cur].CanaryReplicas, ws.Replicas-noNeed)
	desired += noNeed
	if err != nil {
		st.Message = fmt.Sprintf("spec.releasePlan.batches[%d].canaryReplicas: %v", cur, err)
		return reconcile.TerminalError(err)
	}
	placed, err := s.releaser.UpgradeBatch(ctx, desired)
	if err != nil {
		report(st, err, fmt.Sprintf("Batch %d cannot be released: %v", cur, err))
		return fmt.Errorf("upgrading batch %d: %w", cur, err)
	}
	tolerated, err := batch.Tolerated(failureThreshold(s.br, ws), desired)
	if err != nil {
		st.Message = fmt.Sprintf("spec.releasePlan.failureThreshold: %v", err)
		return reconcile.TerminalError(err)
	}
	before := st.CanaryStatus
	st.CanaryStatus = advance(st.CanaryStatus, batchInput{
		Partition: clampPartition(plan.BatchPartition, len(plan.Batches)),
		Batches:   int32(len(plan.Batches)), //nolint:gosec // at most 50 batches
		Placed:    placed,
		Ready:     batch.StepReady(desired, ws.UpdatedReplicas, ws.UpdatedReadyReplicas, tolerated),
		Unsettled: ws.ObservedGeneration < ws.Generation || !ws.Settled,
		Now:       s.now,
	})
	st.CanaryStatus.UpdatedReplicas = ws.UpdatedReplicas
	st.CanaryStatus.UpdatedReadyReplicas = ws.UpdatedReadyReplicas
	st.Message = fmt.Sprintf("Batch %d is %s: %d/%d pods updated, %d ready", cur,
		st.CanaryStatus.CurrentBatchState, ws.UpdatedReplicas, desired, ws.UpdatedReadyReplicas)
	if before.CurrentBatchState != rolloutsv1beta1.ReadyBatchState && st.CanaryStatus.CurrentBatchState == rolloutsv1beta1.ReadyBatchState {
		r.Recorder.Eventf(s.br, nil, "Normal", "BatchReleased", "Release",
			"Batch %d ready: %d pods on revision %s", cur, ws.UpdatedReadyReplicas, ws.UpdateRevision)
	}
	return nil
}

// report sets the status message of a failed workload write, unless the
// write met a conflict: that is no problem to report (the phase runs again
// from a fresh read, finish), and a message set now would cost two status
// writes, this one and the one that clears it.
func report(st *rolloutsv1beta1.BatchReleaseStatus, err error, message string) {
	if !apierrors.IsConflict(err) {
		st.Message = message
	}
}

// failureThreshold is how many unready pods of a batch br tolerates: its
// plan's failureThreshold; when unset none, as OpenKruise behaves, unless
// br opts in (sluice.dev/failure-threshold-default: maxUnavailable) to the
// reading the OpenKruise API documents, the workload's own maxUnavailable.
func failureThreshold(br *rolloutsv1beta1.BatchRelease, ws *workload.Status) *intstr.IntOrString {
	if t := br.Spec.ReleasePlan.FailureThreshold; t != nil {
		return t
	}
	t := intstr.FromInt32(0)
	if br.Annotations[rolloutsv1beta1.FailureThresholdDefaultAnnotation] == rolloutsv1beta1.FailureThresholdDefaultMaxUnavailable {
		t = intstr.FromInt32(ws.MaxUnavailable)
	}
	return &t
}

// holdInterval is how often a hold in progress is looked at: each look
// moves the next pods back.
const holdInterval = 2 * time.Second

// reconcileHold holds the workload on the stable revision
// (spec.releasePlan.holdStable): each call moves pods back through the
// adapter, until none runs another revision.
func (r *Reconciler) reconcileHold(ctx context.Context, s *scope, ws *workload.Status) (ctrl.Result, error) {
	st := &s.br.Status
	before := st.StableHold
	done, err := s.releaser.HoldStable(ctx)
	st.CanaryStatus.UpdatedReplicas, st.CanaryStatus.UpdatedReadyReplicas = ws.UpdatedReplicas, ws.UpdatedReadyReplicas
	switch {
	case errors.Is(err, workload.ErrCannotHoldStable):
		st.StableHold, st.Message = rolloutsv1beta1.StableHoldBlocked, err.Error()
		if before != st.StableHold {
			r.Recorder.Eventf(s.br, nil, "Warning", "CannotHoldStable", "Hold", "%s", err.Error())
		}
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	case err != nil:
		st.StableHold = rolloutsv1beta1.StableHoldHolding
		st.Message = fmt.Sprintf("Holding on revision %s: %v", st.StableRevision, err)
		return ctrl.Result{}, fmt.Errorf("holding the stable revision: %w", err)
	case !done:
		st.StableHold = rolloutsv1beta1.StableHoldHolding
		st.Message = fmt.Sprintf("Moving every pod back to revision %s: %d on revision %s", st.StableRevision, ws.UpdatedReplicas, ws.UpdateRevision)
		return ctrl.Result{RequeueAfter: holdInterval}, nil
	}
	st.StableHold = rolloutsv1beta1.StableHoldHeld
	st.Message = fmt.Sprintf("Every pod runs revision %s; held there", st.StableRevision)
	if before != st.StableHold {
		r.Recorder.Eventf(s.br, nil, "Normal", "StableHeld", "Hold", "Every pod back on revision %s", st.StableRevision)
	}
	return ctrl.Result{RequeueAfter: pollInterval}, nil
}

// noNeedUpdate is how many pods ran the release's revision before it
// started, bounded by replicas.
func noNeedUpdate(st *rolloutsv1beta1.BatchReleaseStatus, replicas int32) int32 {
	if p := st.CanaryStatus.NoNeedUpdateReplicas; p != nil {
		return min(max(*p, 0), replicas)
	}
	return 0
}

// reconcileFinalize hands the workload back once the partition is removed.
func (r *Reconciler) reconcileFinalize(ctx context.Context, s *scope) (ctrl.Result, error) {
	br := s.br
	if br.Status.Phase == rolloutsv1beta1.BatchReleasePhaseCompleted {
		return ctrl.Result{}, nil
	}
	restored, err := r.restoreServices(ctx, br, s.releaser)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !restored {
		br.Status.Phase = rolloutsv1beta1.BatchReleasePhaseFinalizing
		br.Status.Message = "Restoring the stable Services before handing the workload back"
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	wait := br.Spec.ReleasePlan.FinalizingPolicy == rolloutsv1beta1.WaitResumeFinalizingPolicy
	done, err := s.releaser.Finalize(ctx, wait)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("finalizing: %w", err)
	}
	if !done {
		br.Status.Phase = rolloutsv1beta1.BatchReleasePhaseFinalizing
		br.Status.Message = "Handing the workload back to its controller"
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	}
	br.Status.Phase = rolloutsv1beta1.BatchReleasePhaseCompleted
	br.Status.Message = "Workload handed back"
	return ctrl.Result{}, nil
}

// rolloutOf names the Rollout that controls br; empty for a BatchRelease
// of its own.
func rolloutOf(br *rolloutsv1beta1.BatchRelease) string {
	for _, ref := range br.OwnerReferences {
		if ref.Kind == "Rollout" && ref.Controller != nil && *ref.Controller {
			return ref.Name
		}
	}
	return ""
}

// restoreServices gives back, before the workload is handed back, the
// selector of every Service br's Rollout narrowed to a revision the
// workload does not finish on (traffic/service.RestoreBeforeHandBack).
// The Rollout restores them itself before it lets a BatchRelease hand the
// workload back; a BatchRelease deleted by hand, or whose Rollout is gone,
// must not leave them narrowed to a revision Kubernetes is about to
// remove. It reports true once none is left.
func (r *Reconciler) restoreServices(ctx context.Context, br *rolloutsv1beta1.BatchRelease, releaser workload.Releaser) (bool, error) {
	rollout := rolloutOf(br)
	if rollout == "" {
		return true, nil
	}
	var finishing []string
	ws, err := releaser.Status(ctx)
	switch {
	case errors.Is(err, workload.ErrNotFound):
	case err != nil:
		return false, err
	default:
		finishing = []string{ws.UpdateRevision, ws.PodTemplateHash}
	}
	restored, err := service.RestoreBeforeHandBack(ctx, r.Client, r.APIReader, br.Namespace, rollout, finishing...)
	if err != nil {
		return false, fmt.Errorf("restoring the stable Services of Rollout %s: %w", rollout, err)
	}
	return restored, nil
}
