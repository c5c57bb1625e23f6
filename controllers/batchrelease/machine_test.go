package batchrelease

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		// A status that does not describe the workload's spec yet (its own
		// controller has not observed the last write, pods are still
		// coming or going) judges nothing: the hold written as a batch
		// turned Ready made it fall back to Upgrading, and Ready again
		// seconds later, two status writes and a second event for nothing.
		{"ready keeps its state while the workload settles", state{1, "Ready"}, batchInput{Partition: 1, Batches: 3, Placed: true, Unsettled: true}, state{1, "Ready"}},
		{"ready moves on only once settled", state{0, "Ready"}, batchInput{Partition: 2, Batches: 3, Placed: true, Unsettled: true}, state{0, "Ready"}},
		{"ready falls back at once when no longer placed", state{1, "Ready"}, batchInput{Partition: 1, Batches: 3, Unsettled: true}, state{1, "Upgrading"}},
		{"verifying waits while the workload settles", state{1, "Verifying"}, batchInput{Partition: 1, Batches: 3, Placed: true, Ready: true, Unsettled: true}, state{1, "Verifying"}},
		{"upgrading, placed, ready counts but unsettled", state{0, "Upgrading"}, batchInput{Batches: 3, Placed: true, Ready: true, Unsettled: true}, state{0, "Verifying"}},
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

// TestReport: a write conflict, wrapped as the adapters return it, leaves
// the message as it was (the claim of a Deployment that Kubernetes had just
// written cost two status writes, the conflict's message and the next);
// another failure is reported.
func TestReport(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("the object has been modified"))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"conflict", fmt.Errorf("patching deployment shop/web: %w", conflict), "Batch 0 is Upgrading"},
		{"other failure", errors.New("deployment shop/web has spec.strategy.type Recreate"), "cannot be released"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &rolloutsv1beta1.BatchReleaseStatus{Message: "Batch 0 is Upgrading"}
			report(st, tt.err, "cannot be released")
			if st.Message != tt.want {
				t.Fatalf("message %q, want %q", st.Message, tt.want)
			}
		})
	}
}
