package batchrelease

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

func TestReplan_newRolloutID_restartsAtBatch0KeepingNoNeedUpdate(t *testing.T) {
	plan := rolloutsv1beta1.ReleasePlan{
		RolloutID: "app-v1",
		Batches:   []rolloutsv1beta1.ReleaseBatch{{CanaryReplicas: intstr.FromInt32(1)}, {CanaryReplicas: intstr.FromString("100%")}},
	}
	three := int32(3)
	tests := []struct {
		name       string
		observedID string
		noNeed     *int32
		wantBatch  int32
		wantNoNeed *int32
	}{
		{name: "claimed for the rollback before its rollout ID arrived", observedID: "app-v2", noNeed: &three, wantBatch: 0, wantNoNeed: &three},
		{name: "a new rollout ID without pods already on the revision", observedID: "app-v2", wantBatch: 0},
		{name: "same rollout ID: nothing restarts", observedID: "app-v1", noNeed: &three, wantBatch: 1, wantNoNeed: &three},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &rolloutsv1beta1.BatchReleaseStatus{
				StableRevision:           "app-v1",
				ObservedRolloutID:        tt.observedID,
				ObservedWorkloadReplicas: 6,
				ObservedReleasePlanHash:  planHash(plan),
				CanaryStatus: rolloutsv1beta1.BatchReleaseCanaryStatus{
					CurrentBatch: 1, CurrentBatchState: rolloutsv1beta1.ReadyBatchState, NoNeedUpdateReplicas: tt.noNeed,
				},
			}
			replan(st, plan, &workload.Status{Replicas: 6})
			got := st.CanaryStatus
			if got.CurrentBatch != tt.wantBatch || (got.NoNeedUpdateReplicas == nil) != (tt.wantNoNeed == nil) ||
				(got.NoNeedUpdateReplicas != nil && *got.NoNeedUpdateReplicas != *tt.wantNoNeed) {
				t.Fatalf("after replan: batch %d noNeedUpdateReplicas %v, want batch %d noNeedUpdateReplicas %v",
					got.CurrentBatch, got.NoNeedUpdateReplicas, tt.wantBatch, tt.wantNoNeed)
			}
			if st.ObservedRolloutID != plan.RolloutID {
				t.Fatalf("observed rollout ID %q", st.ObservedRolloutID)
			}
		})
	}
}
