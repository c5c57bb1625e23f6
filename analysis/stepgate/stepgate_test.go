package stepgate

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	av1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func rollout(step int32) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout", Labels: map[string]string{"app": "checkout"}},
		Status: rolloutsv1beta1.RolloutStatus{Phase: rolloutsv1beta1.RolloutPhaseProgressing, CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{PodTemplateHash: "v2", StableRevision: "v1", ObservedRolloutID: "id",
				CurrentStepIndex: step, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused},
		}},
	}
}

type gateOpt func(*av1.MetricGate)

func gate(name string, run *av1.AnalysisRun, opts ...gateOpt) av1.MetricGate {
	g := av1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec: av1.MetricGateSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Run:             av1.RunPolicy{Steps: []int32{2}},
			Metrics:         []av1.Metric{{Name: "error-rate", Count: 5}},
		},
	}
	if run != nil {
		g.Status.Rollouts = []av1.RolloutAnalysis{{Name: "checkout", Revision: "v2", RolloutID: "id", Runs: []av1.AnalysisRun{*run}}}
	}
	for _, o := range opts {
		o(&g)
	}
	return g
}

func run(step int32, v av1.Verdict, successful, measured int32, msg string) *av1.AnalysisRun {
	return &av1.AnalysisRun{Step: step, Verdict: v, Message: msg,
		Metrics: []av1.MetricRun{{Name: "error-rate", Verdict: v, Successful: successful, Measured: measured}}}
}

var (
	background = func(g *av1.MetricGate) { g.Spec.Run = av1.RunPolicy{Background: true} }
	report     = func(g *av1.MetricGate) { g.Spec.OnFailure = av1.FailureReport }
	andApprove = func(g *av1.MetricGate) { g.Spec.Advance = av1.AdvanceOnAnalysisAndApproval }
	onApproval = func(g *av1.MetricGate) { g.Spec.Advance = av1.AdvanceOnApproval }
	suspended  = func(g *av1.MetricGate) { g.Spec.Suspend = true }
	otherApp   = func(g *av1.MetricGate) { g.Spec.RolloutSelector.MatchLabels["app"] = "cart" }
	otherRel   = func(g *av1.MetricGate) { g.Status.Rollouts[0].Revision = "v3" }
)

func TestFor(t *testing.T) {
	passed := run(2, av1.VerdictPassed, 5, 5, "error-rate 0.004 (5/5 passed)")
	running := run(2, av1.VerdictRunning, 3, 3, "error-rate 0.004 (3/5 passed)")
	failed := run(2, av1.VerdictFailed, 0, 1, "error-rate 0.12: result < 0.05 is false")
	tests := []struct {
		name    string
		step    int32
		gates   []av1.MetricGate
		want    Decision // Gates and Message compared by wantMsg
		wantMsg string
	}{
		{name: "no gate", step: 2},
		{name: "a step no gate analyses", step: 1, gates: []av1.MetricGate{gate("errors", passed)}},
		{name: "not started yet holds", step: 2, gates: []av1.MetricGate{gate("errors", nil)},
			want: Decision{Hold: true}, wantMsg: "errors: analysis not started yet"},
		{name: "a run of another release is not this one's", step: 2, gates: []av1.MetricGate{gate("errors", passed, otherRel)},
			want: Decision{Hold: true}, wantMsg: "errors: analysis not started yet"},
		{name: "running holds", step: 2, gates: []av1.MetricGate{gate("errors", running)},
			want: Decision{Hold: true}, wantMsg: "errors: analysis 3/5 passed (error-rate 0.004 (3/5 passed))"},
		{name: "passed waives the approval", step: 2, gates: []av1.MetricGate{gate("errors", passed)},
			want: Decision{ApprovalWaived: true}, wantMsg: "errors: analysis 5/5 passed (error-rate 0.004 (5/5 passed))"},
		{name: "passed, approval wanted too", step: 2, gates: []av1.MetricGate{gate("errors", passed, andApprove)},
			want: Decision{NeedsApproval: true}},
		{name: "running, approval wanted too", step: 2, gates: []av1.MetricGate{gate("errors", running, andApprove)},
			want: Decision{Hold: true, NeedsApproval: true}},
		{name: "advance on approval: running holds nothing, asks nothing", step: 2, gates: []av1.MetricGate{gate("errors", running, onApproval)},
			want: Decision{}},
		{name: "failed aborts", step: 2, gates: []av1.MetricGate{gate("errors", failed)},
			want:    Decision{Abort: true, Failures: []string{"errors: error-rate 0.12: result < 0.05 is false"}},
			wantMsg: "errors: analysis failed: error-rate 0.12: result < 0.05 is false"},
		{name: "failed, report only", step: 2, gates: []av1.MetricGate{gate("errors", failed, report)},
			want: Decision{Failures: []string{"errors: error-rate 0.12: result < 0.05 is false"}}},
		{name: "failed aborts even with approvals wanted", step: 2, gates: []av1.MetricGate{gate("errors", failed, andApprove)},
			want: Decision{Abort: true, NeedsApproval: true, Failures: []string{"errors: error-rate 0.12: result < 0.05 is false"}}},
		{name: "inconclusive asks a person", step: 2, gates: []av1.MetricGate{gate("errors", run(2, av1.VerdictInconclusive, 1, 3, "x"))},
			want: Decision{NeedsApproval: true}, wantMsg: "errors: analysis inconclusive: x"},
		{name: "one passed, one running: hold, no waiver", step: 2,
			gates: []av1.MetricGate{gate("a", passed), gate("b", running)}, want: Decision{Hold: true}},
		{name: "background running holds nothing", step: 1, gates: []av1.MetricGate{gate("bg", run(0, av1.VerdictRunning, 2, 2, "r"), background)},
			want: Decision{}},
		{name: "background failure aborts at any step", step: 1, gates: []av1.MetricGate{gate("bg", run(0, av1.VerdictFailed, 0, 1, "boom"), background)},
			want: Decision{Abort: true, Failures: []string{"bg: boom"}}},
		{name: "background does not waive a step's approval", step: 2, gates: []av1.MetricGate{gate("bg", run(0, av1.VerdictPassed, 1, 1, "ok"), background)},
			want: Decision{}},
		{name: "suspended gates have no say", step: 2, gates: []av1.MetricGate{gate("errors", failed, suspended)}},
		{name: "gates of other rollouts have no say", step: 2, gates: []av1.MetricGate{gate("errors", failed, otherApp)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := For(tt.gates, rollout(tt.step))
			if got.Hold != tt.want.Hold || got.NeedsApproval != tt.want.NeedsApproval || got.ApprovalWaived != tt.want.ApprovalWaived ||
				got.Abort != tt.want.Abort || strings.Join(got.Failures, "|") != strings.Join(tt.want.Failures, "|") {
				t.Fatalf("For() = %+v, want %+v", got, tt.want)
			}
			if tt.wantMsg != "" && got.Message != tt.wantMsg {
				t.Fatalf("message %q, want %q", got.Message, tt.wantMsg)
			}
		})
	}
}

func TestFor_describesTheStepAndTheAnalysedSteps(t *testing.T) {
	g := gate("errors", nil)
	g.Spec.Run.Steps = []int32{3, 1}
	bg := gate("bg", nil, background)
	d := For([]av1.MetricGate{g, bg}, rollout(2))
	if d.Step != 2 || d.Revision != "" || len(d.Steps) != 2 || d.Steps[0] != 1 || d.Steps[1] != 3 {
		t.Fatalf("For() = step %d, revision %q, steps %v; want step 2, steps [1 3]", d.Step, d.Revision, d.Steps)
	}
	if !d.Analyses(3) || d.Analyses(2) {
		t.Fatalf("Analyses(3), Analyses(2) = %v, %v", d.Analyses(3), d.Analyses(2))
	}
}

func TestFor_shortMessagesAndWhoAborts(t *testing.T) {
	r := run(2, av1.VerdictRunning, 3, 3, "error-rate 0.004 (3/5 passed)")
	r.Metrics[0].Measurements = []av1.Measurement{{Index: 3, Value: "0.004", Outcome: av1.OutcomeSuccessful}}
	d := For([]av1.MetricGate{gate("errors", r)}, rollout(2))
	if d.Short != "analysis 3/5 passed (error-rate 0.004)" {
		t.Fatalf("Short = %q", d.Short)
	}
	if _, ok := d.AbortBy(); ok {
		t.Fatal("a running analysis aborts nothing")
	}
	failed := run(2, av1.VerdictFailed, 0, 1, "error-rate 0.12: result < 0.05 is false")
	d = For([]av1.MetricGate{gate("a", failed, report), gate("b", failed)}, rollout(2))
	say, ok := d.AbortBy()
	if !ok || say.Gate != "b" || say.Failure != "error-rate 0.12: result < 0.05 is false" {
		t.Fatalf("AbortBy() = %+v, %v; want gate b and its failure", say, ok)
	}
	if d.Short != "a: analysis failed: error-rate 0.12: result < 0.05 is false; b: analysis failed: error-rate 0.12: result < 0.05 is false" {
		t.Fatalf("Short = %q", d.Short)
	}
}

// A retried release starts its analysis over: the failed run of the
// aborted release, and a run stopped before its verdict, are not the new
// release's.
func TestFor_runsBeforeARetryOrStoppedSayNothing(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	failed := run(2, av1.VerdictFailed, 0, 1, "boom")
	failed.StartedAt = started
	ro := rollout(2)
	ro.Status.CanaryStatus.CanaryRevision = "rev2"
	ro.Annotations = map[string]string{
		rolloutsv1beta1.RetryAnnotation:        "true",
		rolloutsv1beta1.RetryContextAnnotation: `{"by":"ops","at":"2026-12-01T12:05:00.5Z","revision":"rev2"}`,
	}
	if Since(ro).IsZero() {
		t.Fatal("Since() is zero; want the retry's time")
	}
	d := For([]av1.MetricGate{gate("errors", failed)}, ro)
	if d.Abort || !d.Hold {
		t.Fatalf("For() = %+v; want the old failed run ignored: hold, no abort", d)
	}
	sameSecond := run(2, av1.VerdictFailed, 1, 0, "boom")
	sameSecond.StartedAt = metav1.NewTime(time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)) // the retry's second
	if d := For([]av1.MetricGate{gate("errors", sameSecond)}, ro); d.Abort || !d.Hold {
		t.Fatalf("For() = %+v; want a run of the retry's own second ignored: it may be the aborted release's", d)
	}
	fresh := run(2, av1.VerdictPassed, 5, 5, "ok")
	fresh.StartedAt = metav1.NewTime(time.Date(2026, 12, 1, 12, 5, 1, 0, time.UTC)) // the second after
	if d := For([]av1.MetricGate{gate("errors", fresh)}, ro); !d.ApprovalWaived {
		t.Fatalf("For() = %+v; want the run of the second after the retry counted", d)
	}
	stopped := run(2, av1.VerdictRunning, 1, 1, "stopped")
	stopped.FinishedAt = &started
	if d := For([]av1.MetricGate{gate("errors", stopped)}, rollout(2)); !d.Hold || d.Message != "errors: analysis not started yet" {
		t.Fatalf("For() = %+v; want a stopped run to count as not started", d)
	}
}
