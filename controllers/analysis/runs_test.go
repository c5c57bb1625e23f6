package analysis

import (
	"github.com/sluice-dev/sluice/analysis/stepgate"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func rolloutAt(step int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{
		Phase: rolloutsv1beta1.RolloutPhaseProgressing,
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{StableRevision: "old", PodTemplateHash: "new", ObservedRolloutID: "id1",
				CurrentStepIndex: step, CurrentStepState: state},
			CanaryRevision: "newrev",
		},
	}}
}

func TestReleaseOf(t *testing.T) {
	tests := []struct {
		name       string
		ro         *rolloutsv1beta1.Rollout
		wantActive bool
	}{
		{name: "paused at step 2", ro: rolloutAt(2, rolloutsv1beta1.CanaryStepStatePaused), wantActive: true},
		{name: "no status", ro: &rolloutsv1beta1.Rollout{}},
		{name: "completed", ro: rolloutAt(3, rolloutsv1beta1.CanaryStepStateCompleted)},
		{name: "healthy", ro: func() *rolloutsv1beta1.Rollout {
			ro := rolloutAt(2, rolloutsv1beta1.CanaryStepStatePaused)
			ro.Status.Phase = rolloutsv1beta1.RolloutPhaseHealthy
			return ro
		}()},
		{name: "rolling back in batches to stable", ro: func() *rolloutsv1beta1.Rollout {
			ro := rolloutAt(2, rolloutsv1beta1.CanaryStepStatePaused)
			ro.Status.CanaryStatus.PodTemplateHash = "old"
			return ro
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := releaseOf(tt.ro); got.Active != tt.wantActive {
				t.Fatalf("Active = %v, want %v (%+v)", got.Active, tt.wantActive, got)
			}
		})
	}
	if rel := releaseOf(rolloutAt(2, rolloutsv1beta1.CanaryStepStatePaused)); rel.Revision != "new" || rel.RolloutID != "id1" || rel.Stable != "old" {
		t.Fatalf("release %+v: want the pods' revision new, id1, stable old", rel)
	}
}

func TestWantedRun(t *testing.T) {
	steps := &analysisv1alpha1.MetricGateSpec{Run: analysisv1alpha1.RunPolicy{Steps: []int32{2}}}
	bg := &analysisv1alpha1.MetricGateSpec{Run: analysisv1alpha1.RunPolicy{Background: true}}
	tests := []struct {
		name     string
		spec     *analysisv1alpha1.MetricGateSpec
		ro       *rolloutsv1beta1.Rollout
		wantStep int32
		want     bool
	}{
		{name: "step listed and settled", spec: steps, ro: rolloutAt(2, rolloutsv1beta1.CanaryStepStatePaused), wantStep: 2, want: true},
		{name: "step listed, metrics analysis state", spec: steps, ro: rolloutAt(2, rolloutsv1beta1.CanaryStepStateMetricsAnalysis), wantStep: 2, want: true},
		{name: "step listed, still upgrading", spec: steps, ro: rolloutAt(2, rolloutsv1beta1.CanaryStepStateUpgrade)},
		{name: "step not listed", spec: steps, ro: rolloutAt(1, rolloutsv1beta1.CanaryStepStatePaused)},
		{name: "background, first step upgrading", spec: bg, ro: rolloutAt(1, rolloutsv1beta1.CanaryStepStateUpgrade)},
		{name: "background, first step settled", spec: bg, ro: rolloutAt(1, rolloutsv1beta1.CanaryStepStatePaused), want: true},
		{name: "background, later step upgrading", spec: bg, ro: rolloutAt(3, rolloutsv1beta1.CanaryStepStateUpgrade), want: true},
		{name: "background, release over", spec: bg, ro: rolloutAt(3, rolloutsv1beta1.CanaryStepStateCompleted)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := wantedRun(tt.spec, releaseOf(tt.ro))
			if ok != tt.want || (ok && step != tt.wantStep) {
				t.Fatalf("wantedRun() = %d, %v; want %d, %v", step, ok, tt.wantStep, tt.want)
			}
		})
	}
}

func TestEntryFor_newReleaseStartsOver(t *testing.T) {
	prev := &analysisv1alpha1.RolloutAnalysis{Name: "a", Revision: "new", RolloutID: "id1", Runs: []analysisv1alpha1.AnalysisRun{{Step: 1}}}
	if e := entryFor(prev, "a", release{Revision: "new", RolloutID: "id1"}); len(e.Runs) != 1 {
		t.Fatal("the same release lost its runs")
	}
	if e := entryFor(prev, "a", release{Revision: "newer", RolloutID: "id2"}); len(e.Runs) != 0 || e.Revision != "newer" {
		t.Fatalf("a new revision kept the old runs: %+v", e)
	}
	if e := entryFor(prev, "a", release{Revision: "new", RolloutID: "id2"}); len(e.Runs) != 0 {
		t.Fatal("a new rollout-id of the same revision kept the old runs")
	}
	if e := entryFor(prev, "a", release{}); len(e.Runs) != 1 {
		t.Fatal("a Rollout whose status says nothing lost its runs")
	}
}

func TestStartAndStopRuns(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	spec := &analysisv1alpha1.MetricGateSpec{Run: analysisv1alpha1.RunPolicy{Steps: []int32{1, 2}},
		Metrics: []analysisv1alpha1.Metric{{Name: "error-rate", Count: 3}}}
	e := &analysisv1alpha1.RolloutAnalysis{}
	if !startRun(e, 1, now) || startRun(e, 1, now) {
		t.Fatal("startRun: want one run started for step 1, then none")
	}
	syncMetrics(e.RunOf(1), spec)
	// The release moves on to step 2 before step 1's verdict.
	stopRuns(e, spec, releaseOf(rolloutAt(2, rolloutsv1beta1.CanaryStepStateUpgrade)), now)
	r1 := e.RunOf(1)
	if r1.FinishedAt == nil || !strings.Contains(r1.Message, "stopped before its verdict (the release left step 1)") {
		t.Fatalf("step 1 run after leaving step 1: %+v", r1)
	}
	// It comes back to step 1 (a jump): the stopped run starts afresh.
	if !startRun(e, 1, now) || e.RunOf(1).FinishedAt != nil {
		t.Fatal("a stopped run was not started again")
	}
	// A run with a final verdict is kept as it is.
	e.RunOf(1).Verdict, e.RunOf(1).FinishedAt = analysisv1alpha1.VerdictPassed, &now
	if startRun(e, 1, now) {
		t.Fatal("a passed run was started again")
	}
}

func TestStopRuns_backgroundConcludesWhenTheReleaseEnds(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	spec := &analysisv1alpha1.MetricGateSpec{Run: analysisv1alpha1.RunPolicy{Background: true},
		Metrics: []analysisv1alpha1.Metric{{Name: "error-rate"}}}
	e := &analysisv1alpha1.RolloutAnalysis{}
	startRun(e, backgroundStep, now)
	r := e.RunOf(backgroundStep)
	r.Metrics = []analysisv1alpha1.MetricRun{{Name: "error-rate", Verdict: analysisv1alpha1.VerdictRunning, Measured: 4, Successful: 4,
		Message: "error-rate 0.01 (4 passed)"}}
	if got := stopRuns(e, spec, releaseOf(rolloutAt(3, rolloutsv1beta1.CanaryStepStatePaused)), now); len(got) != 0 {
		t.Fatal("the background run stopped while the release goes on")
	}
	got := stopRuns(e, spec, releaseOf(rolloutAt(3, rolloutsv1beta1.CanaryStepStateCompleted)), now)
	if len(got) != 1 || r.Verdict != analysisv1alpha1.VerdictPassed || r.FinishedAt == nil {
		t.Fatalf("background run at the release's end: %+v", r)
	}
}

func TestSyncMetrics_followsTheSpec(t *testing.T) {
	r := &analysisv1alpha1.AnalysisRun{Metrics: []analysisv1alpha1.MetricRun{
		{Name: "gone", Measured: 1}, {Name: "b", Measured: 2, Message: "b 1 (2/5 passed)"},
	}}
	spec := &analysisv1alpha1.MetricGateSpec{Metrics: []analysisv1alpha1.Metric{{Name: "a", Count: 1}, {Name: "b", Count: 5}}}
	syncMetrics(r, spec)
	if len(r.Metrics) != 2 || r.Metrics[0].Name != "a" || r.Metrics[0].Verdict != analysisv1alpha1.VerdictRunning ||
		r.Metrics[1].Measured != 2 {
		t.Fatalf("metrics %+v", r.Metrics)
	}
	if r.Metrics[0].Message != "a: waiting for the first measurement" {
		t.Fatalf("new metric's message %q", r.Metrics[0].Message)
	}
}

func TestDueAt(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := &analysisv1alpha1.AnalysisRun{StartedAt: metav1.NewTime(start)}
	m := &analysisv1alpha1.Metric{Interval: metav1.Duration{Duration: 30 * time.Second}, InitialDelay: metav1.Duration{Duration: 10 * time.Second}}
	if got := dueAt(r, m, &analysisv1alpha1.MetricRun{}); !got.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("first due %s", got)
	}
	taken := start.Add(50 * time.Second)
	mr := &analysisv1alpha1.MetricRun{Measured: 1, Measurements: []analysisv1alpha1.Measurement{{Index: 1, Time: metav1.NewMicroTime(taken)}}}
	if got := dueAt(r, m, mr); !got.Equal(taken.Add(30 * time.Second)) {
		t.Fatalf("second due %s, want 30s after the first was taken", got)
	}
}

// A release retried after an abort is analysed anew: the runs started
// before the retry (the failed one that aborted it) are dropped, and a new
// run of the step starts.
func TestEntryFor_retriedReleaseDropsTheRunsBeforeTheRetry(t *testing.T) {
	ro := rolloutAt(1, rolloutsv1beta1.CanaryStepStatePaused)
	ro.Annotations = map[string]string{
		rolloutsv1beta1.RetryAnnotation:        "true",
		rolloutsv1beta1.RetryContextAnnotation: `{"by":"ops","at":"2026-12-01T12:05:00.5Z","revision":"newrev"}`,
	}
	rel := releaseOf(ro)
	if rel.Since.IsZero() {
		t.Fatal("release.Since is zero; want the retry's time")
	}
	failed := analysisv1alpha1.AnalysisRun{Step: 1, Verdict: analysisv1alpha1.VerdictFailed,
		StartedAt: metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
	prev := &analysisv1alpha1.RolloutAnalysis{Name: "a", Revision: "new", RolloutID: "id1", Runs: []analysisv1alpha1.AnalysisRun{failed}}
	e := entryFor(prev, "a", rel)
	if len(e.Runs) != 0 {
		t.Fatalf("runs %+v, want the run before the retry dropped", e.Runs)
	}
	if !startRun(&e, 1, metav1.NewTime(time.Date(2026, 12, 1, 12, 5, 1, 0, time.UTC))) {
		t.Fatal("no new run started after the retry")
	}
	if e2 := entryFor(&e, "a", rel); len(e2.Runs) != 1 {
		t.Fatalf("runs %+v, want the run after the retry kept", e2.Runs)
	}
}

// A run started in the very second of the retry cannot be told from a run
// of the aborted release (run times are kept to the second): it is dropped,
// and the first run of the retried release waits for the next second.
func TestRetry_runOfTheRetrysSecond(t *testing.T) {
	since := time.Date(2026, 12, 1, 12, 5, 0, 500_000_000, time.UTC)
	sameSecond := analysisv1alpha1.AnalysisRun{Step: 1, Verdict: analysisv1alpha1.VerdictFailed,
		StartedAt: metav1.NewTime(time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC))}
	if !stepgate.Stale(&sameSecond, since) {
		t.Fatal("a failed run of the retry's second counts for the retried release")
	}
	next := sameSecond
	next.StartedAt = metav1.NewTime(time.Date(2026, 12, 1, 12, 5, 1, 0, time.UTC))
	if stepgate.Stale(&next, since) {
		t.Fatal("a run of the second after the retry is stale")
	}
	if got, want := stepgate.RunsFrom(since), next.StartedAt.Time; !got.Equal(want) {
		t.Fatalf("RunsFrom %v, want %v", got, want)
	}
	if !stepgate.RunsFrom(time.Time{}).IsZero() {
		t.Fatal("RunsFrom of no retry is not zero")
	}
}
