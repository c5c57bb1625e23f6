package analysis_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/test/poll"
	"github.com/sluice-dev/sluice/test/release"
)

// Given a release paused at step 1 (a pause without duration) and a gate
// analysing step 1 whose metric passes,
// when its two measurements succeed,
// then the step goes on without an approval and the release completes.
func TestStepGate_passedAnalysis_advancesWithoutApproval(t *testing.T) {
	srv := newStatsServer(t, 0.01)
	ns, _ := releasedApp(t, "gated-pass")
	createGate(t, gate(ns, "errors", "gated-pass", webMetric("error-rate", srv.URL, 2)))

	ro := release.Wait(t, suite.c, ns, "gated-pass", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.StableRevision == r.Status.CanaryStatus.CanaryRevision
	})
	if ro.Status.Aborted != nil {
		t.Fatalf("aborted %+v", ro.Status.Aborted)
	}
	if len(srv.seen()) < 2 {
		t.Fatalf("%d measurements taken, want the step to wait for both", len(srv.seen()))
	}
	eventOf(t, ns, "Rollout", "gated-pass", "AnalysisPassed", "Step 1/2: errors: analysis 2/2 passed")
}

// Given a release paused at step 1 and a gate analysing it whose metric
// fails (30% errors),
// when the first measurement fails,
// then the release is aborted at once by the gate, naming the metric and
// its value, and held on the stable revision: every pod back on v1, the
// pod template untouched.
func TestStepGate_failedAnalysis_abortsAndHoldsOnStable(t *testing.T) {
	srv := newStatsServer(t, 0.3)
	ns, _ := releasedApp(t, "gated-fail")
	createGate(t, gate(ns, "errors", "gated-fail", webMetric("error-rate", srv.URL, 5)))

	ro := release.Wait(t, suite.c, ns, "gated-fail", "aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
	ab := ro.Status.Aborted
	if ab.By != "MetricGate errors" || ab.Via != canary.ViaAnalysis || ab.Step != 1 || !strings.Contains(ab.Reason, "error-rate 0.3: result < 0.05 is false") {
		t.Fatalf("aborted %+v, want it by the gate via analysis naming the metric and value", ab)
	}
	var cond *rolloutsv1beta1.RolloutCondition
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == canary.RolloutConditionAnalysis {
			cond = &ro.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != "False" || !strings.Contains(cond.Message, "error-rate 0.3") {
		t.Fatalf("Analysis condition %+v, want False naming the value", cond)
	}
	eventOf(t, ns, "Rollout", "gated-fail", "Aborted", "by MetricGate errors via analysis at step 1/2 (error-rate 0.3: result < 0.05 is false)")
	d := &appsv1.Deployment{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "gated-fail"}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "app:v2" {
		t.Fatalf("template image %s: the abort must leave the template alone", img)
	}
	if d.Status.UpdatedReplicas != 0 {
		t.Fatalf("%d pods still on v2, want every pod back on the stable revision", d.Status.UpdatedReplicas)
	}
}

// Given a gate whose onFailure is Report,
// when its analysis fails,
// then the release is not aborted: the step waits for its approval, and
// the Rollout's Analysis condition names the metric and value.
func TestStepGate_failedReportOnly_reportsAndWaits(t *testing.T) {
	srv := newStatsServer(t, 0.3)
	ns, _ := releasedApp(t, "gated-report")
	g := gate(ns, "errors", "gated-report", webMetric("error-rate", srv.URL, 5))
	g.Spec.OnFailure = analysisv1alpha1.FailureReport
	createGate(t, g)

	ro := release.Wait(t, suite.c, ns, "gated-report", "the failure reported", func(r *rolloutsv1beta1.Rollout) bool {
		for _, c := range r.Status.Conditions {
			if c.Type == canary.RolloutConditionAnalysis && c.Status == "False" {
				return true
			}
		}
		return false
	})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.Aborted != nil || ro.Status.CurrentStepIndex != 1 ||
		!strings.Contains(ro.Status.Message, "waiting for approval (errors: analysis failed: error-rate 0.3") {
		t.Fatalf("phase %s step %d aborted %+v message %q: want step 1 waiting for approval", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.Aborted, ro.Status.Message)
	}
}

// Given a release aborted by its gate (30% errors) and held on stable,
// when the errors go away and the release is retried as kubectl sluice
// retry asks for it,
// then the retried release is analysed anew (the failed run of the
// aborted one decides nothing), the new run passes and the release
// completes.
func TestStepGate_retryAfterAnalysisAbort_measuresAgainAndCompletes(t *testing.T) {
	srv := newStatsServer(t, 0.3)
	ns, _ := releasedApp(t, "gated-retry")
	createGate(t, gate(ns, "errors", "gated-retry", webMetric("error-rate", srv.URL, 2)))

	ro := release.Wait(t, suite.c, ns, "gated-retry", "aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
	failed := len(srv.seen())
	srv.setRate(0.01)
	now := time.Now()
	patch, err := json.Marshal(abort.Patch(rolloutsv1beta1.RetryAnnotation,
		abort.Request{Revision: ro.Status.Aborted.Revision, Via: "kubectl-sluice", At: &now}))
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.c.Patch(poll.Context(t), ro, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("writing the retry: %v", err)
	}
	eventOf(t, ns, "Rollout", "gated-retry", "Retried", "releasing it again from step 1")

	release.Wait(t, suite.c, ns, "gated-retry", "the retried release completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.StableRevision == r.Status.CanaryStatus.CanaryRevision
	})
	if len(srv.seen()) < failed+2 {
		t.Fatalf("%d measurements after the retry, want the retried step measured again (2)", len(srv.seen())-failed)
	}
}
