package canary

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	av1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
)

// gateWithRun is what a MetricGate analysing step 1 of ro says when its
// only run of step 1 started at started with verdict v, read as the
// controller reads it (stepgate.For, which drops runs older than a retry).
func gateWithRun(ro *rolloutsv1beta1.Rollout, v av1.Verdict, started time.Time) *stepgate.Decision {
	g := av1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "errors"},
		Spec: av1.MetricGateSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Run:             av1.RunPolicy{Steps: []int32{1}}, Advance: av1.AdvanceOnAnalysis, OnFailure: av1.FailureAbort,
			Metrics: []av1.Metric{{Name: "error-rate", Count: 1}},
		},
	}
	run := av1.AnalysisRun{Step: 1, Verdict: v, Message: "error-rate " + string(v), StartedAt: metav1.NewTime(started),
		Metrics: []av1.MetricRun{{Name: "error-rate", Verdict: v, Measured: 1}}}
	if v.Done() {
		run.FinishedAt = &run.StartedAt
	}
	g.Status.Rollouts = []av1.RolloutAnalysis{{Name: "web", Revision: "v2", RolloutID: "v2", Runs: []av1.AnalysisRun{run}}}
	d := stepgate.For([]av1.MetricGate{g}, ro)
	return &d
}

// TestNext_retryAfterAnalysisAbort_measuresAgain: a release aborted by a
// failed analysis and retried is released again from step 1; the failed
// run of the aborted release neither aborts the retried one nor lets it
// advance; a run started after the retry decides.
func TestNext_retryAfterAnalysisAbort_measuresAgain(t *testing.T) {
	ro := pausedAtStep1(t, nil)
	failedAt := t0.Add(90 * time.Second)
	act := apply(ro, Observation{Now: t0.Add(2 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0),
		Analysis: gateWithRun(ro, av1.VerdictFailed, failedAt)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ro.Status.Aborted == nil || ro.Status.Aborted.Via != ViaAnalysis {
		t.Fatalf("after the failed analysis: %s %+v %+v", ro.Status.Phase, ro.Status.Aborted, act.Events)
	}
	held := holding(rolloutsv1beta1.StableHoldHeld)
	apply(ro, Observation{Now: t0.Add(3 * time.Minute), Workload: releasing(0, 0), BatchRelease: held,
		Analysis: gateWithRun(ro, av1.VerdictFailed, failedAt)})
	if ro.Status.Aborted == nil || !ro.Status.Aborted.Held {
		t.Fatalf("not held: %s %+v %q", ro.Status.Phase, ro.Status.Aborted, ro.Status.Message)
	}

	retryAt := t0.Add(5 * time.Minute)
	retry := request("v2", retryAt)
	ro.Annotations = map[string]string{rolloutsv1beta1.RetryAnnotation: abort.Encode(*retry)}
	obs := func(now time.Duration, w [2]int32, br *BatchReleaseView, v av1.Verdict, started time.Time) Observation {
		return Observation{Now: t0.Add(now), Workload: releasing(w[0], w[1]), BatchRelease: br, Retry: retry,
			Analysis: gateWithRun(ro, v, started)}
	}
	act = apply(ro, obs(5*time.Minute, [2]int32{0, 0}, held, av1.VerdictFailed, failedAt))
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.Aborted != nil || !hasEvent(act, "Retried") {
		t.Fatalf("after the retry: %s %+v %+v", ro.Status.Phase, ro.Status.Aborted, act.Events)
	}
	for i, now := range []time.Duration{6 * time.Minute, 7 * time.Minute, 8 * time.Minute} {
		act = apply(ro, obs(now, [2]int32{1, 1}, readyBatch(0), av1.VerdictFailed, failedAt))
		if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.CurrentStepIndex != 1 {
			t.Fatalf("call %d after the retry: the old failed run decided: %s step %d %+v %q %+v",
				i, ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.Aborted, ro.Status.Message, act.Events)
		}
	}
	apply(ro, obs(9*time.Minute, [2]int32{1, 1}, readyBatch(0), av1.VerdictPassed, retryAt.Add(time.Minute)))
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("the run after the retry passed: %s step %d %q, want step 2", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.Message)
	}
}
