package canary

import (
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestRollbackInBatch(t *testing.T) {
	blueGreen := func(ro *rolloutsv1beta1.Rollout) {
		ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
			Steps: []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
		}}
	}
	routed := func(ro *rolloutsv1beta1.Rollout) {
		ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{Service: "web"}}
	}
	tests := []struct {
		name       string
		annotation string
		edit       func(*rolloutsv1beta1.Rollout)
		want       bool
	}{
		{name: "canary with the annotation", annotation: "true", want: true},
		{name: "canary without it", want: false},
		{name: "any other value", annotation: "yes", want: false},
		{name: "canary routing traffic rolls back at once", annotation: "true", edit: routed, want: false},
		{name: "blue-green rolls back at once: every old pod still runs", annotation: "true", edit: blueGreen, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := rollout(step("1", nil), step("100%", nil))
			if tt.annotation != "" {
				ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: tt.annotation}
			}
			if tt.edit != nil {
				tt.edit(ro)
			}
			if got := rollbackInBatch(ro); got != tt.want {
				t.Fatalf("rollbackInBatch = %v, want %v", got, tt.want)
			}
		})
	}
}
