package plugin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Rollout gated at step 1 by a MetricGate whose web metric reads
// 0.01, 0.02, then 0.3,
// when the release fails its analysis and is aborted,
// then status draws the metric's measurements as a small chart with its
// last values and verdict, and says the gate aborted the release, naming
// the metric and its value.
func TestPlugin_status_drawsTheAnalysisMeasurements(t *testing.T) {
	var mu sync.Mutex
	rates := []float64{0.01, 0.02, 0.3}
	served := 0
	stats := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		rate := rates[min(served, len(rates)-1)]
		served++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"errorRate": %g}`, rate)
	}))
	t.Cleanup(stats.Close)

	ns := newNamespace(t)
	deployment(t, ns, 4, v1)
	createRollout(t, ns, "apps/v1", "Deployment", canary(step("1", nil), step("100%", nil)))
	g := &analysisv1alpha1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "errors"},
		Spec: analysisv1alpha1.MetricGateSpec{
			Run: analysisv1alpha1.RunPolicy{Steps: []int32{1}},
			Metrics: []analysisv1alpha1.Metric{{Name: "error-rate", Count: 5, Interval: metav1.Duration{Duration: time.Second},
				SuccessCondition: "result < 0.05",
				Provider:         analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{URL: stats.URL, Method: "GET", JSONPath: "{.errorRate}"}}}},
		},
	}
	if err := suite.c.Create(ctxFor(t), g); err != nil {
		t.Fatalf("creating metricgate: %v", err)
	}
	setImage(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, v2)
	ro := waitRollout(t, ns, "aborted by the analysis", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil
	})

	out := mustSluice(t, "status", "web", "-n", ns)
	assertContains(t, "status after the failed analysis", out,
		"Aborted: revision "+ro.Status.Aborted.Revision+" at step 1 by MetricGate errors via analysis",
		"(error-rate 0.3: result < 0.05 is false)",
		"Analysis:\n errors step 1 error-rate Failed ▁▁█ 0.01 0.02 0.3 error-rate 0.3: result < 0.05 is false")
}
