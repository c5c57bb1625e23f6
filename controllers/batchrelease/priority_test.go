package batchrelease

import (
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

func TestPrioritized_pollsWaitBehindEvents(t *testing.T) {
	tests := []struct {
		name   string
		result ctrl.Result
		want   *int // nil: the request keeps the priority it came with
	}{
		{"a poll of a batch in flight", ctrl.Result{RequeueAfter: pollInterval}, new(handler.LowPriority)},
		{"a longer wait", ctrl.Result{RequeueAfter: time.Minute}, new(handler.LowPriority)},
		{"a conflict retried", ctrl.Result{RequeueAfter: conflictRetry}, new(0)},
		{"a count write spaced", ctrl.Result{RequeueAfter: time.Second}, new(0)},
		{"done", ctrl.Result{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prioritized(tt.result)
			if got.RequeueAfter != tt.result.RequeueAfter {
				t.Fatalf("RequeueAfter changed to %s", got.RequeueAfter)
			}
			switch {
			case tt.want == nil && got.Priority != nil:
				t.Errorf("priority %d, want the request's own", *got.Priority)
			case tt.want != nil && (got.Priority == nil || *got.Priority != *tt.want):
				t.Errorf("priority %v, want %d", got.Priority, *tt.want)
			}
		})
	}
}
