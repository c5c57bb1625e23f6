package batchrelease

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestProgressOnly(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(1001, 0))
	status := func(batch int32, state rolloutsv1beta1.BatchReleaseBatchStateType, pods, ready int32, msg string, updated metav1.Time) *rolloutsv1beta1.BatchReleaseStatus {
		return &rolloutsv1beta1.BatchReleaseStatus{
			Phase: rolloutsv1beta1.RolloutPhaseProgressing, Message: msg, ObservedGeneration: 3,
			CanaryStatus: rolloutsv1beta1.BatchReleaseCanaryStatus{CurrentBatch: batch, CurrentBatchState: state, UpdatedReplicas: pods, UpdatedReadyReplicas: ready},
			Conditions: []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionProgressing, Status: corev1.ConditionTrue,
				Reason: "Progressing", Message: msg, LastTransitionTime: t0, LastUpdateTime: updated}},
		}
	}
	up, ready := rolloutsv1beta1.UpgradingBatchState, rolloutsv1beta1.ReadyBatchState
	moved := status(1, up, 5, 3, "b", t1)
	moved.ObservedGeneration = 4
	for _, tc := range []struct {
		name          string
		before, after *rolloutsv1beta1.BatchReleaseStatus
		want          bool
	}{
		{"one more pod ready", status(1, up, 5, 3, "3 ready", t0), status(1, up, 5, 4, "4 ready", t1), true},
		{"more pods placed", status(1, up, 3, 3, "a", t0), status(1, up, 5, 3, "b", t1), true},
		{"nothing changed", status(1, up, 5, 3, "a", t0), status(1, up, 5, 3, "a", t0), false},
		{"the batch is ready", status(1, up, 5, 4, "a", t0), status(1, ready, 5, 5, "b", t1), false},
		{"the next batch", status(1, ready, 5, 5, "a", t0), status(2, up, 5, 5, "b", t1), false},
		{"a new generation observed", status(1, up, 5, 3, "a", t0), moved, false},
	} {
		if got := progressOnly(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: progressOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
