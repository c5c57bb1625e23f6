package canary

import (
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// blueGreen is a blue-green Rollout of steps.
func blueGreen(steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	ro := rollout()
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{Steps: steps}}
	return ro
}

// TestNext_lastStepReleasingEveryPod_pausesForBlueGreenOnly: a last step
// that releases every pod goes on at once for a canary release, but a
// blue-green release pauses there as OpenKruise does: the old pods are the
// instant way back until someone confirms.
func TestNext_lastStepReleasingEveryPod_pausesForBlueGreenOnly(t *testing.T) {
	tests := []struct {
		name      string
		ro        *rolloutsv1beta1.Rollout
		wantState rolloutsv1beta1.CanaryStepState
	}{
		{"canary: the last step does not pause", rollout(step("50%", nil), step("100%", nil)), rolloutsv1beta1.CanaryStepStateCompleted},
		{"blue-green: the last step waits for approval", blueGreen(step("50%", nil), step("100%", nil)), rolloutsv1beta1.CanaryStepStatePaused},
		{"blue-green: a timed last step waits its pause", blueGreen(step("50%", nil), step("100%", ptr[int32](60))), rolloutsv1beta1.CanaryStepStatePaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := tt.ro
			apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
			apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(0)})
			if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
				t.Fatalf("step 1: %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
			}
			approveStep(ro)
			apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(0)})
			apply(ro, Observation{Now: t0, Workload: releasing(10, 10), BatchRelease: readyBatch(1)})
			if ro.Status.CurrentStepState != tt.wantState {
				t.Fatalf("last step state %s, want %s: %s", ro.Status.CurrentStepState, tt.wantState, ro.Status.Message)
			}
		})
	}
}

// approveStep approves the current step as kubectl-kruise does: in the
// status that holds the release.
func approveStep(ro *rolloutsv1beta1.Rollout) {
	if bg := ro.Status.BlueGreenStatus; bg != nil {
		bg.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
		return
	}
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
}

// TestNext_blueGreen_keepsItsReleaseInBlueGreenStatus: the machine takes a
// blue-green release from status.blueGreenStatus and returns it there, as
// OpenKruise keeps it, with no canaryStatus beside it; a canary release
// stays in status.canaryStatus.
func TestNext_blueGreen_keepsItsReleaseInBlueGreenStatus(t *testing.T) {
	bg := blueGreen(step("50%", nil), step("100%", nil))
	apply(bg, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(bg, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(0)})
	if bg.Status.CanaryStatus != nil || bg.Status.BlueGreenStatus == nil {
		t.Fatalf("blue-green status: canaryStatus %+v, blueGreenStatus %+v", bg.Status.CanaryStatus, bg.Status.BlueGreenStatus)
	}
	if got := bg.Status.BlueGreenStatus; got.CurrentStepIndex != 1 || got.UpdatedRevision != "v2" || got.UpdatedReplicas != 5 {
		t.Fatalf("blueGreenStatus = %+v, want step 1 of v2 with 5 updated", got)
	}
	approveStep(bg)
	apply(bg, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(0)})
	if got := bg.Status.BlueGreenStatus; bg.Status.CanaryStatus != nil || got == nil || got.CurrentStepIndex != 2 {
		t.Fatalf("after the approval in blueGreenStatus: canaryStatus %+v, blueGreenStatus %+v", bg.Status.CanaryStatus, got)
	}
	ca := rollout(step("50%", nil), step("100%", nil))
	apply(ca, Observation{Now: t0, Workload: releasing(0, 0)})
	if ca.Status.CanaryStatus == nil || ca.Status.BlueGreenStatus != nil {
		t.Fatalf("canary status: canaryStatus %+v, blueGreenStatus %+v", ca.Status.CanaryStatus, ca.Status.BlueGreenStatus)
	}
}
