package batchrelease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// patchStatus writes the status computed by this reconcile, if it changed,
// with a merge patch guarded by the resourceVersion read.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	setProgressing(s.br, s.now)
	if apiequality.Semantic.DeepEqual(s.base.Status, s.br.Status) {
		return nil
	}
	// Wall time, not r.Clock: this spaces out API writes, and a frozen
	// test clock must not hold the counts back for ever.
	key, now := client.ObjectKeyFromObject(s.br), time.Now()
	if progressOnly(&s.base.Status, &s.br.Status) {
		if s.deferred = r.progress.Wait(key, now); s.deferred > 0 {
			return nil
		}
	}
	err := r.Client.Status().Patch(ctx, s.br, client.MergeFromWithOptions(s.base, client.MergeFromWithOptimisticLock{}),
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

// setProgressing derives the Progressing condition from the phase.
func setProgressing(br *rolloutsv1beta1.BatchRelease, now time.Time) {
	status := corev1.ConditionTrue
	reason := string(br.Status.Phase)
	if br.Status.Phase == rolloutsv1beta1.BatchReleasePhaseCompleted {
		status = corev1.ConditionFalse
	}
	if reason == "" {
		return
	}
	for i := range br.Status.Conditions {
		c := &br.Status.Conditions[i]
		if c.Type != rolloutsv1beta1.RolloutConditionProgressing {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		if c.Status != status || c.Reason != reason || c.Message != br.Status.Message {
			c.LastUpdateTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message = status, reason, br.Status.Message
		return
	}
	br.Status.Conditions = append(br.Status.Conditions, rolloutsv1beta1.RolloutCondition{
		Type: rolloutsv1beta1.RolloutConditionProgressing, Status: status, Reason: reason, Message: br.Status.Message,
		LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	})
}

// planHash identifies the batches of a plan.
func planHash(p rolloutsv1beta1.ReleasePlan) string {
	b, _ := json.Marshal(p.Batches)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
