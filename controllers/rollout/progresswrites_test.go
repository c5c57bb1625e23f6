package rollout

import (
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestProgressOnly(t *testing.T) {
	canary := func(step int32, state rolloutsv1beta1.CanaryStepState, pods, ready int32, msg string) *rolloutsv1beta1.RolloutStatus {
		return &rolloutsv1beta1.RolloutStatus{Message: msg, CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus:   rolloutsv1beta1.CommonStatus{CurrentStepIndex: step, CurrentStepState: state},
			CanaryReplicas: pods, CanaryReadyReplicas: ready,
		}}
	}
	up := rolloutsv1beta1.CanaryStepStateUpgrade
	for _, tc := range []struct {
		name          string
		before, after *rolloutsv1beta1.RolloutStatus
		want          bool
	}{
		{"one more pod ready", canary(2, up, 5, 3, "3 ready"), canary(2, up, 5, 4, "4 ready"), true},
		{"more pods placed", canary(2, up, 3, 3, "a"), canary(2, up, 5, 3, "b"), true},
		{"nothing changed", canary(2, up, 5, 3, "a"), canary(2, up, 5, 3, "a"), false},
		{"the next step", canary(2, up, 5, 5, "a"), canary(3, up, 5, 5, "b"), false},
		{"a new state", canary(2, up, 5, 5, "a"), canary(2, rolloutsv1beta1.CanaryStepStateReady, 5, 5, "a"), false},
		{"the canary status appears", &rolloutsv1beta1.RolloutStatus{}, canary(1, up, 0, 0, ""), false},
		{"blue-green pods", &rolloutsv1beta1.RolloutStatus{BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{UpdatedReplicas: 1}},
			&rolloutsv1beta1.RolloutStatus{BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{UpdatedReplicas: 2, UpdatedReadyReplicas: 1}}, true},
	} {
		if got := progressOnly(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: progressOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
