package batchrelease

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestAdvance(t *testing.T) {
	now := time.Unix(1000, 0)
	type state struct {
		batch int32
		state rolloutsv1beta1.BatchReleaseBatchStateType
	}
	tests := []struct {
		name string
		from state
		in   batchInput
		want state
	}{
		{"not started, not placed", state{0, ""}, batchInput{Partition: 0, Batches: 3}, state{0, "Upgrading"}},
		{"upgrading, placed but not ready", state{0, "Upgrading"}, batchInput{Batches: 3, Placed: true}, state{0, "Verifying"}},
		{"upgrading, placed and ready", state{0, "Upgrading"}, batchInput{Batches: 3, Placed: true, Ready: true}, state{0, "Ready"}},
		{"verifying becomes ready", state{1, "Verifying"}, batchInput{Partition: 1, Batches: 3, Placed: true, Ready: true}, state{1, "Ready"}},
		{"verifying loses placement", state{1, "Verifying"}, batchInput{Partition: 1, Batches: 3}, state{1, "Upgrading"}},
		{"ready waits at partition", state{1, "Ready"}, batchInput{Partition: 1, Batches: 3, Placed: true, Ready: true}, state{1, "Ready"}},
		{"ready moves on below partition", state{0, "Ready"}, batchInput{Partition: 2, Batches: 3, Placed: true, Ready: true}, state{1, "Upgrading"}},
		{"ready never passes the last batch", state{2, "Ready"}, batchInput{Partition: 5, Batches: 3, Placed: true, Ready: true}, state{2, "Ready"}},
		{"ready falls back when pods turn unready", state{1, "Ready"}, batchInput{Partition: 1, Batches: 3, Placed: true}, state{1, "Upgrading"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = now
			from := rolloutsv1beta1.BatchReleaseCanaryStatus{CurrentBatch: tt.from.batch, CurrentBatchState: tt.from.state}
			if tt.from.state == rolloutsv1beta1.ReadyBatchState {
				from.BatchReadyTime = &metav1.Time{Time: now.Add(-time.Minute)}
			}
			got := advance(from, tt.in)
			if got.CurrentBatch != tt.want.batch || got.CurrentBatchState != tt.want.state {
				t.Fatalf("advance() = batch %d %q, want batch %d %q", got.CurrentBatch, got.CurrentBatchState, tt.want.batch, tt.want.state)
			}
			if (got.CurrentBatchState == rolloutsv1beta1.ReadyBatchState) != (got.BatchReadyTime != nil) {
				t.Fatalf("batchReadyTime = %v in state %q", got.BatchReadyTime, got.CurrentBatchState)
			}
		})
	}
}

func TestClampPartition(t *testing.T) {
	p := func(v int32) *int32 { return &v }
	tests := []struct {
		name    string
		p       *int32
		batches int
		want    int32
	}{
		{"nil means all", nil, 3, 2},
		{"within", p(1), 3, 1},
		{"past the end", p(7), 3, 2},
		{"negative", p(-1), 3, 0},
		{"no batches", p(1), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clampPartition(tt.p, tt.batches); got != tt.want {
				t.Fatalf("clampPartition() = %d, want %d", got, tt.want)
			}
		})
	}
}
