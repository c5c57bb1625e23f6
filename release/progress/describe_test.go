package progress

import (
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func ptr[T any](v T) *T { return &v }

func TestPause(t *testing.T) {
	tests := []struct {
		name              string
		pause             rolloutsv1beta1.RolloutPause
		last, releasesAll bool
		want              string
	}{
		{name: "approval", want: "until approved"},
		{name: "timed", pause: rolloutsv1beta1.RolloutPause{Duration: ptr[int32](30)}, want: "30s"},
		{name: "none", pause: rolloutsv1beta1.RolloutPause{Duration: ptr[int32](0)}, want: "none"},
		{name: "last step releasing all", last: true, releasesAll: true, want: "none (last step)"},
		{name: "last step releasing part", last: true, want: "until approved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pause(tt.pause, tt.last, tt.releasesAll); got != tt.want {
				t.Fatalf("Pause = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAtStep(t *testing.T) {
	steps := []rolloutsv1beta1.CanaryStep{{}, {}, {}}
	tests := []struct {
		name   string
		status rolloutsv1beta1.RolloutStatus
		want   string
	}{
		{name: "no release", want: ""},
		{name: "before the first step", status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{}}, want: ""},
		{name: "canary at step 2", status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{CurrentStepIndex: 2}}}, want: "2/3"},
		{name: "blue-green at step 3", status: rolloutsv1beta1.RolloutStatus{BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{CurrentStepIndex: 3}}}, want: "3/3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := &rolloutsv1beta1.Rollout{Status: tt.status}
			ro.Spec.Strategy.Canary = &rolloutsv1beta1.CanaryStrategy{Steps: steps}
			if got := AtStep(ro); got != tt.want {
				t.Fatalf("AtStep = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWaitOf(t *testing.T) {
	at := func(idx int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
		ro := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: rolloutsv1beta1.RolloutPhaseProgressing,
			CanaryStatus: &rolloutsv1beta1.CanaryStatus{CommonStatus: rolloutsv1beta1.CommonStatus{CurrentStepIndex: idx, CurrentStepState: state}}}}
		ro.Spec.Strategy.Canary = &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{{}, {Pause: rolloutsv1beta1.RolloutPause{Duration: ptr[int32](30)}}}}
		return ro
	}
	frozen := at(1, rolloutsv1beta1.CanaryStepStateUpgrade)
	frozen.Spec.Strategy.Paused = true
	healthy := at(2, rolloutsv1beta1.CanaryStepStateCompleted)
	healthy.Status.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		want Wait
	}{
		{name: "approval", ro: at(1, rolloutsv1beta1.CanaryStepStatePaused), want: Wait{Kind: WaitApproval, Step: 1, Steps: 2}},
		{name: "timed pause", ro: at(2, rolloutsv1beta1.CanaryStepStatePaused), want: Wait{Kind: WaitPause, Step: 2, Steps: 2, Seconds: 30}},
		{name: "upgrading", ro: at(1, rolloutsv1beta1.CanaryStepStateUpgrade), want: Wait{Step: 1, Steps: 2}},
		{name: "frozen", ro: frozen, want: Wait{Kind: WaitFrozen, Step: 1, Steps: 2}},
		{name: "no release in progress", ro: healthy, want: Wait{Step: 2, Steps: 2}},
		{name: "step out of range", ro: at(3, rolloutsv1beta1.CanaryStepStatePaused), want: Wait{Step: 3, Steps: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WaitOf(tt.ro); got != tt.want {
				t.Fatalf("WaitOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
