package batchrelease

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// batchInput is what one reconcile of a progressing BatchRelease observed.
type batchInput struct {
	// Partition is spec.releasePlan.batchPartition, clamped to the batches.
	Partition int32
	// Batches is the number of batches in the plan.
	Batches int32
	// Placed is what the workload adapter reported for the current batch.
	Placed bool
	// Ready is whether the current batch's pods are updated and ready.
	Ready bool
	// Unsettled is true when the workload's status does not describe its
	// spec yet: its controller has not observed the last write (often
	// sluice's own, made in this reconcile), or pods are still coming or
	// going. Readiness is then judged neither way.
	Unsettled bool
	// Now is the reconcile time.
	Now time.Time
}

// advance moves the batch state of a progressing BatchRelease one step:
// Upgrading until the adapter has placed the batch, Verifying until its pods
// are ready, Ready until the partition allows the next batch. It never moves
// past the partition and falls back when a batch stops being placed or ready.
// While the workload is unsettled, a batch that is still placed keeps its
// state: only a settled status says whether its pods are ready.
func advance(s rolloutsv1beta1.BatchReleaseCanaryStatus, in batchInput) rolloutsv1beta1.BatchReleaseCanaryStatus {
	switch s.CurrentBatchState {
	case rolloutsv1beta1.VerifyingBatchState:
		switch {
		case !in.Placed:
			s.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
		case in.Unsettled:
		case in.Ready:
			s.CurrentBatchState = rolloutsv1beta1.ReadyBatchState
			t := metav1.NewTime(in.Now)
			s.BatchReadyTime = &t
		}
	case rolloutsv1beta1.ReadyBatchState:
		switch {
		case !in.Placed || (!in.Unsettled && !in.Ready):
			s.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
			s.BatchReadyTime = nil
		case in.Unsettled:
		case s.CurrentBatch < in.Partition && s.CurrentBatch+1 < in.Batches:
			s.CurrentBatch++
			s.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
			s.BatchReadyTime = nil
		}
	default: // Upgrading, or not started
		s.CurrentBatchState = rolloutsv1beta1.UpgradingBatchState
		if in.Placed {
			s.CurrentBatchState = rolloutsv1beta1.VerifyingBatchState
			if in.Ready && !in.Unsettled {
				s.CurrentBatchState = rolloutsv1beta1.ReadyBatchState
				t := metav1.NewTime(in.Now)
				s.BatchReadyTime = &t
			}
		}
	}
	return s
}

// clampPartition bounds a batchPartition to the plan's batches.
func clampPartition(p *int32, batches int) int32 {
	if p == nil || batches == 0 {
		return int32(max(batches-1, 0)) //nolint:gosec // at most 50 batches
	}
	return min(max(*p, 0), int32(batches-1)) //nolint:gosec // at most 50 batches
}
