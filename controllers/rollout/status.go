package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/release/canary"
)

// patchStatus writes the status if it changed, with a merge patch guarded
// by the resourceVersion read, so an approval written meanwhile by a user is
// never overwritten: the patch fails and the next reconcile sees it.
//
// A change of pod counts alone waits until the last write is
// spacing.Interval old; s.deferred then says how long, and the reconcile
// comes back by then.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	if apiequality.Semantic.DeepEqual(s.base.Status, s.ro.Status) {
		return nil
	}
	// Wall time, not r.Clock: this spaces out API writes, and a frozen
	// test clock must not hold the counts back for ever.
	key, now := client.ObjectKeyFromObject(s.ro), time.Now()
	if progressOnly(&s.base.Status, &s.ro.Status) {
		if s.deferred = r.progress.Wait(key, now); s.deferred > 0 {
			return nil
		}
	}
	obj := s.ro.DeepCopy()
	obj.ResourceVersion = s.base.ResourceVersion
	err := r.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(s.base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(rolloutsv1beta1.FieldManager))
	if apierrors.IsNotFound(err) {
		r.progress.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	r.progress.Wrote(key, now)
	return nil
}

// setReconcileError reports err, the failure of a phase, in the
// ReconcileError condition, or removes the condition when the reconcile
// succeeded. A write conflict is no failure (the next reconcile plans again
// from a fresh read), nor is a cache behind sluice's own write
// (ownwrites.ErrBehind: the reconcile comes back once it caught up); both
// leave the condition as it was.
func setReconcileError(st *rolloutsv1beta1.RolloutStatus, err error, now time.Time) {
	if apierrors.IsConflict(err) || errors.Is(err, ownwrites.ErrBehind) {
		return
	}
	i := slices.IndexFunc(st.Conditions, func(c rolloutsv1beta1.RolloutCondition) bool {
		return c.Type == rolloutsv1beta1.RolloutConditionReconcileError
	})
	if err == nil {
		if i >= 0 {
			st.Conditions = slices.Delete(st.Conditions, i, i+1)
		}
		return
	}
	reason := "Reconcile"
	var pe *phaseError
	if errors.As(err, &pe) {
		reason, err = pe.phase, pe.err
	}
	c := rolloutsv1beta1.RolloutCondition{Type: rolloutsv1beta1.RolloutConditionReconcileError, Status: corev1.ConditionTrue,
		Reason: reason, Message: err.Error(), LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
	if i < 0 {
		st.Conditions = append(st.Conditions, c)
		return
	}
	if old := st.Conditions[i]; old.Reason == c.Reason && old.Message == c.Message {
		return
	}
	c.LastTransitionTime = st.Conditions[i].LastTransitionTime
	st.Conditions[i] = c
}

// viewOf extracts what the step machine reads from a BatchRelease.
func viewOf(br *rolloutsv1beta1.BatchRelease) *canary.BatchReleaseView {
	return &canary.BatchReleaseView{
		Partition:          br.Spec.ReleasePlan.BatchPartition,
		Policy:             br.Spec.ReleasePlan.FinalizingPolicy,
		RolloutID:          br.Spec.ReleasePlan.RolloutID,
		Generation:         br.Generation,
		ObservedGeneration: br.Status.ObservedGeneration,
		Phase:              br.Status.Phase,
		CurrentBatch:       br.Status.CanaryStatus.CurrentBatch,
		BatchState:         br.Status.CanaryStatus.CurrentBatchState,
		StableRevision:     br.Status.StableRevision,
		UpdateRevision:     br.Status.UpdateRevision,
		Deleting:           !br.DeletionTimestamp.IsZero(),
		SkipHandBack:       br.Annotations[rolloutsv1beta1.SkipHandBackAnnotation] == "true",
		HoldStable:         br.Spec.ReleasePlan.HoldStable,
		StableHold:         br.Status.StableHold,
		Message:            br.Status.Message,
	}
}

// statusApprover names the field manager that last wrote
// status.canaryStatus.currentStepState, unless it is sluice itself: that is
// who approved through the status subresource.
func statusApprover(ro *rolloutsv1beta1.Rollout) string {
	for _, mf := range ro.ManagedFields {
		if mf.Manager == rolloutsv1beta1.FieldManager || mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for _, sub := range []string{"f:canaryStatus", "f:blueGreenStatus"} {
			if _, ok := fields["f:status"][sub]["f:currentStepState"]; ok {
				return mf.Manager
			}
		}
	}
	return ""
}
