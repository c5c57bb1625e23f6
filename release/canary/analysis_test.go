package canary

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	av1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

// pausedAtStep1 returns a Rollout of 1 / 50% / 100% whose first step has
// the pause given, paused at step 1 of the release of v2 since t0+1m.
func pausedAtStep1(t *testing.T, pause *int32) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := rollout(step("1", pause), step("50%", nil), step("100%", nil))
	ro.Labels = map[string]string{"app": "web"}
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0.Add(time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("setup: step %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	return ro
}

// gateSays is what a MetricGate analysing step 1 of ro says, read as the
// controller reads it (stepgate.For): a run of the verdict, with the
// advance and failure policies.
func gateSays(ro *rolloutsv1beta1.Rollout, v av1.Verdict, advance av1.AdvancePolicy, onFailure av1.FailureAction) *stepgate.Decision {
	msg := map[av1.Verdict]string{
		av1.VerdictRunning: "error-rate 0.004 (2/5 passed)", av1.VerdictPassed: "error-rate 0.004 (5/5 passed)",
		av1.VerdictFailed: "error-rate 0.3: result < 0.05 is false", av1.VerdictInconclusive: "error-rate: no data (2 inconclusive, inconclusiveLimit 1)",
	}[v]
	g := av1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "errors"},
		Spec: av1.MetricGateSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Run:             av1.RunPolicy{Steps: []int32{1}}, Advance: advance, OnFailure: onFailure,
			Metrics: []av1.Metric{{Name: "error-rate", Count: 5}},
		},
	}
	if v != "" {
		run := av1.AnalysisRun{Step: 1, Verdict: v, Message: msg, StartedAt: metav1.NewTime(t0.Add(time.Minute)),
			Metrics: []av1.MetricRun{{Name: "error-rate", Verdict: v, Measured: 5, Successful: 5,
				Measurements: []av1.Measurement{{Index: 5, Value: "0.004", Outcome: av1.OutcomeSuccessful}}}}}
		g.Status.Rollouts = []av1.RolloutAnalysis{{Name: "web", Revision: "v2", RolloutID: "v2", Runs: []av1.AnalysisRun{run}}}
	}
	d := stepgate.For([]av1.MetricGate{g}, ro)
	return &d
}

func TestNext_stepAnalysis(t *testing.T) {
	const (
		analysisOnly = av1.AdvanceOnAnalysis
		andApproval  = av1.AdvanceOnAnalysisAndApproval
		abortIt      = av1.FailureAbort
		reportIt     = av1.FailureReport
	)
	approved := &approval.Approval{Revision: "v2", Step: 1, By: "alice", Via: "label", At: ptr(t0.Add(90 * time.Second))}
	tests := []struct {
		name      string
		pause     *int32
		verdict   av1.Verdict
		advance   av1.AdvancePolicy
		onFailure av1.FailureAction
		approval  *approval.Approval
		now       time.Duration // after t0
		// wantStep is the step the release is at afterwards (0: aborted).
		wantStep  int32
		wantMsg   string
		wantCond  string // the Analysis condition's reason; "" when removed
		wantEvent string
	}{
		{name: "not started: an approval does not let it go on", verdict: "", advance: analysisOnly, approval: approved, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "waiting for its analysis: errors: analysis not started yet (approved by alice", wantCond: AnalysisReasonRunning},
		{name: "running holds a pause without duration", verdict: av1.VerdictRunning, advance: analysisOnly, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "Step 1/3 paused, waiting for its analysis: errors: analysis 5/5 passed", wantCond: AnalysisReasonRunning},
		{name: "passed: a pause without duration goes on without an approval", verdict: av1.VerdictPassed, advance: analysisOnly, now: 2 * time.Minute,
			wantStep: 2, wantEvent: "AnalysisPassed"},
		{name: "passed, approval wanted too: waits for it", verdict: av1.VerdictPassed, advance: andApproval, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "waiting for approval (errors: analysis 5/5 passed", wantCond: AnalysisReasonPassed},
		{name: "passed and approved: goes on", verdict: av1.VerdictPassed, advance: andApproval, approval: approved, now: 2 * time.Minute,
			wantStep: 2, wantEvent: "Approved"},
		{name: "approved, still running: holds", verdict: av1.VerdictRunning, advance: andApproval, approval: approved, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "approved by alice: it goes on once the analysis passed", wantCond: AnalysisReasonRunning},
		{name: "timed pause over, analysis running: holds", pause: ptr(int32(30)), verdict: av1.VerdictRunning, advance: analysisOnly, now: 5 * time.Minute,
			wantStep: 1, wantMsg: "waiting for its analysis", wantCond: AnalysisReasonRunning},
		{name: "timed pause over, analysis passed: goes on", pause: ptr(int32(30)), verdict: av1.VerdictPassed, advance: analysisOnly, now: 5 * time.Minute,
			wantStep: 2},
		{name: "timed pause not over, analysis passed: waits for the duration", pause: ptr(int32(600)), verdict: av1.VerdictPassed, advance: analysisOnly, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "paused for 600s", wantCond: AnalysisReasonPassed},
		{name: "timed pause over, passed, approval wanted: waits for it", pause: ptr(int32(30)), verdict: av1.VerdictPassed, advance: andApproval, now: 5 * time.Minute,
			wantStep: 1, wantMsg: "waiting for approval", wantCond: AnalysisReasonPassed},
		{name: "inconclusive asks a person", verdict: av1.VerdictInconclusive, advance: analysisOnly, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "waiting for approval (errors: analysis inconclusive", wantCond: AnalysisReasonInconclusive},
		{name: "inconclusive, approved: goes on", verdict: av1.VerdictInconclusive, advance: analysisOnly, approval: approved, now: 2 * time.Minute,
			wantStep: 2},
		{name: "failed, Report: reported, the step follows its pause", verdict: av1.VerdictFailed, advance: analysisOnly, onFailure: reportIt, now: 2 * time.Minute,
			wantStep: 1, wantMsg: "waiting for approval (errors: analysis failed: error-rate 0.3", wantCond: AnalysisReasonFailed},
		{name: "failed, Report, timed pause over: goes on", pause: ptr(int32(30)), verdict: av1.VerdictFailed, advance: analysisOnly, onFailure: reportIt, now: 5 * time.Minute,
			wantStep: 2},
		{name: "failed, Abort: aborted at once, before the pause ends", pause: ptr(int32(600)), verdict: av1.VerdictFailed, advance: analysisOnly, onFailure: abortIt, now: 2 * time.Minute,
			wantStep: 0, wantEvent: "Aborted"},
		{name: "failed, Abort, approved: aborted all the same", verdict: av1.VerdictFailed, advance: andApproval, onFailure: abortIt, approval: approved, now: 2 * time.Minute,
			wantStep: 0, wantEvent: "Aborted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := pausedAtStep1(t, tt.pause)
			d := gateSays(ro, tt.verdict, tt.advance, tt.onFailure)
			act := apply(ro, Observation{Now: t0.Add(tt.now), Workload: releasing(1, 1), BatchRelease: readyBatch(0), Approval: tt.approval, Analysis: d})
			if tt.wantStep == 0 {
				ab := ro.Status.Aborted
				if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ab == nil || ab.Step != 1 || ab.By != "MetricGate errors" ||
					ab.Via != ViaAnalysis || ab.Reason != "error-rate 0.3: result < 0.05 is false" {
					t.Fatalf("want aborted by the gate naming the metric and value: %s %+v %q", ro.Status.Phase, ab, ro.Status.Message)
				}
				if act.BatchRelease != EnsureBatchRelease || !act.HoldStable || act.Approved == nil || act.Approved.Action != approval.ActionAbort {
					t.Fatalf("actions %+v, want the hold on stable and the abort recorded", act)
				}
				if c := condition(ro, RolloutConditionAnalysis); c == nil || c.Reason != AnalysisReasonFailed || !strings.Contains(c.Message, "error-rate 0.3") {
					t.Fatalf("Analysis condition %+v, want Failed naming the value", c)
				}
				c := condition(ro, rolloutsv1beta1.RolloutConditionProgressing)
				if !strings.Contains(c.Message, "by MetricGate errors via analysis at step 1/3 (error-rate 0.3: result < 0.05 is false)") {
					t.Fatalf("Progressing %q does not say who aborted, with which metric and value", c.Message)
				}
			} else if ro.Status.CurrentStepIndex != tt.wantStep {
				t.Fatalf("at step %d %s (%q), want step %d", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message, tt.wantStep)
			}
			if tt.wantMsg != "" && !strings.Contains(ro.Status.Message, tt.wantMsg) {
				t.Errorf("message %q, want it to say %q", ro.Status.Message, tt.wantMsg)
			}
			if tt.wantStep != 0 {
				c := condition(ro, RolloutConditionAnalysis)
				switch {
				case tt.wantCond == "" && c != nil:
					t.Errorf("Analysis condition %+v, want none", c)
				case tt.wantCond != "" && (c == nil || c.Reason != tt.wantCond):
					t.Errorf("Analysis condition %+v, want reason %s", c, tt.wantCond)
				}
			}
			if tt.wantEvent != "" && !hasEvent(act, tt.wantEvent) {
				t.Errorf("events %+v, want %s", act.Events, tt.wantEvent)
			}
		})
	}
}

// The decision read before the call is about step 1; a release that
// enters step 2, which a gate analyses too, in the same call holds there
// until a decision about step 2 is read.
func TestNext_stepEnteredInTheSameCall_holdsUntilItsAnalysisIsRead(t *testing.T) {
	ro := pausedAtStep1(t, nil)
	d := gateSays(ro, av1.VerdictPassed, av1.AdvanceOnAnalysis, av1.FailureAbort)
	d.Steps = []int32{1, 2}
	apply(ro, Observation{Now: t0.Add(2 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0), Analysis: d})
	apply(ro, Observation{Now: t0.Add(3 * time.Minute), Workload: releasing(5, 5), BatchRelease: readyBatch(1), Analysis: d})
	if ro.Status.CurrentStepIndex != 2 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused ||
		!strings.Contains(ro.Status.Message, "waiting for its analysis: analysis not started yet") {
		t.Fatalf("step %d %s %q, want step 2 held for its analysis", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	}
}

// A step approved through the status (kubectl-kruise rollout approve)
// while its analysis runs waits for the analysis.
func TestNext_statusApprovalWhileAnalysing_waitsForTheAnalysis(t *testing.T) {
	ro := pausedAtStep1(t, nil)
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	d := gateSays(ro, av1.VerdictRunning, av1.AdvanceOnAnalysis, av1.FailureAbort)
	apply(ro, Observation{Now: t0.Add(2 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0), Analysis: d})
	if ro.Status.CurrentStepIndex != 1 || !strings.Contains(ro.Status.Message, "approved; waiting for its analysis") {
		t.Fatalf("step %d %s %q, want step 1 waiting for its analysis", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	}
	d = gateSays(ro, av1.VerdictPassed, av1.AdvanceOnAnalysis, av1.FailureAbort)
	apply(ro, Observation{Now: t0.Add(3 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0), Analysis: d})
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("step %d %s %q, want step 2 once the analysis passed", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	}
}

// With sluice.dev/on-progress-deadline: abort, a step whose pods are not
// ready within the deadline aborts the release as well as reporting
// Stalled.
func TestNext_progressDeadlineAbort(t *testing.T) {
	for _, abortIt := range []bool{false, true} {
		ro := rollout(step("1", nil), step("50%", nil))
		apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
		upgrading := readyBatch(0)
		upgrading.BatchState = rolloutsv1beta1.UpgradingBatchState
		act := apply(ro, Observation{Now: t0.Add(11 * time.Minute), Workload: releasing(1, 0), BatchRelease: upgrading,
			ProgressDeadline: 10 * time.Minute, AbortOnProgressDeadline: abortIt, UnreadyPods: []string{"web-1 (CrashLoopBackOff)"}})
		c := condition(ro, rolloutsv1beta1.RolloutConditionStalled)
		if c == nil || c.Status != "True" || !hasEvent(act, "ProgressDeadlineExceeded") {
			t.Fatalf("abort=%v: Stalled %+v, events %+v", abortIt, c, act.Events)
		}
		ab := ro.Status.Aborted
		switch {
		case !abortIt && (ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ab != nil):
			t.Fatalf("without abort: phase %s aborted %+v, want only a report", ro.Status.Phase, ab)
		case abortIt && (ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ab == nil || ab.Via != ViaProgressDeadline ||
			!strings.Contains(ab.Reason, "not ready: web-1 (CrashLoopBackOff)") || !act.HoldStable):
			t.Fatalf("with abort: phase %s aborted %+v actions %+v", ro.Status.Phase, ab, act)
		}
	}
}
