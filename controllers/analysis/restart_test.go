package analysis_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/poll"
	"github.com/sluice-dev/sluice/test/release"
)

// Given a run of six measurements, two seconds apart, under way, holding
// step 1 of the release,
// when sluice stops after the second measurement and starts again later,
// then nothing is measured while it is down, and the run resumes where it
// was: measurements 1 to 6, each recorded once, six in all, none lost;
// the step waits for them and the release completes once they passed.
func TestMetricGate_managerRestartMidRun_neitherLosesNorRepeatsAMeasurement(t *testing.T) {
	srv := newStatsServer(t, 0.01)
	ns, _ := releasedApp(t, "checkout")
	m := webMetric("error-rate", srv.URL, 6)
	m.Interval.Duration = 2 * time.Second
	createGate(t, gate(ns, "errors", "checkout", m))

	waitRun(t, ns, "errors", "checkout", 1, "two measurements", func(r *analysisv1alpha1.AnalysisRun) bool {
		return len(r.Metrics) == 1 && r.Metrics[0].Measured >= 2
	})
	if ro := release.Wait(t, suite.c, ns, "checkout", "read", func(*rolloutsv1beta1.Rollout) bool { return true }); ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("the release left step 1 (step %d %s) before its analysis passed", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = startManager(t.Context())
		}
	})
	before := measured(t, ns)
	requests := len(srv.seen())
	// Proving that nothing happens while sluice is down needs time to pass:
	// longer than two intervals, in which a running controller measures.
	time.Sleep(5 * time.Second)
	if got := measured(t, ns); got != before || len(srv.seen()) != requests {
		t.Fatalf("measured %d -> %d, requests %d -> %d while sluice was down", before, got, requests, len(srv.seen()))
	}
	if err := startManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted = true

	run := waitRun(t, ns, "errors", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	mr := run.Metrics[0]
	if mr.Measured != 6 || mr.Successful != 6 || len(mr.Measurements) != 6 {
		t.Fatalf("metric run %+v: want six measurements", mr)
	}
	for i, m := range mr.Measurements {
		if m.Index != int32(i+1) {
			t.Errorf("measurement %d has index %d", i, m.Index)
		}
		if i > 0 && m.Time.Sub(mr.Measurements[i-1].Time.Time) < 2*time.Second {
			t.Errorf("measurements %d and %d only %s apart", i, i+1, m.Time.Sub(mr.Measurements[i-1].Time.Time))
		}
	}
	release.Wait(t, suite.c, ns, "checkout", "completed after its analysis passed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.StableRevision == r.Status.CanaryStatus.CanaryRevision
	})
}

func measured(t *testing.T, ns string) int32 {
	t.Helper()
	g := &analysisv1alpha1.MetricGate{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "errors"}, g); err != nil {
		t.Fatal(err)
	}
	if ra := g.Status.RolloutAnalysisOf("checkout"); ra != nil {
		if run := ra.RunOf(1); run != nil && len(run.Metrics) == 1 {
			return run.Metrics[0].Measured
		}
	}
	return -1
}
