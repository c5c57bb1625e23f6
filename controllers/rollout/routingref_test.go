package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestRoutingRefOf(t *testing.T) {
	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		want string
	}{
		{name: "canary field", ro: &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{
			Canary: &rolloutsv1beta1.CanaryStrategy{TrafficRoutingRef: "shop"}}}}, want: "shop"},
		{name: "blue-green field", ro: &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{
			BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{TrafficRoutingRef: "shop"}}}}, want: "shop"},
		{name: "annotation", ro: &rolloutsv1beta1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "edge"}},
			Spec:       rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}}}}, want: "edge"},
		{name: "field wins over the annotation", ro: &rolloutsv1beta1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "edge"}},
			Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{
				Canary: &rolloutsv1beta1.CanaryStrategy{TrafficRoutingRef: "shop"}}}}, want: "shop"},
		{name: "none", ro: &rolloutsv1beta1.Rollout{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ro.TrafficRoutingRef(); got != tt.want {
				t.Errorf("TrafficRoutingRef() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReleasing(t *testing.T) {
	tests := []struct {
		phase   rolloutsv1beta1.RolloutPhase
		leaving bool
		want    bool
	}{
		{phase: rolloutsv1beta1.RolloutPhaseProgressing, want: true},
		{phase: rolloutsv1beta1.RolloutPhaseTerminating, want: true},
		{phase: rolloutsv1beta1.RolloutPhaseDisabling, want: true},
		{phase: rolloutsv1beta1.RolloutPhaseTerminating, leaving: true, want: false},
		{phase: rolloutsv1beta1.RolloutPhaseHealthy, want: false},
		{phase: rolloutsv1beta1.RolloutPhaseDisabled, want: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			ro := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: tt.phase}}
			if got := releasing(ro, tt.leaving); got != tt.want {
				t.Errorf("releasing(%s, leaving %v) = %v, want %v", tt.phase, tt.leaving, got, tt.want)
			}
		})
	}
}
