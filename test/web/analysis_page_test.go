package webtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/web"
)

// chartState is what the page shows of one metric's chart.
type chartState struct {
	Metric   string   `json:"metric"`
	Verdict  string   `json:"verdict"`
	Outcomes []string `json:"outcomes"`
	Values   []string `json:"values"`
	Line     string   `json:"line"`
	Aborted  string   `json:"aborted"`
}

const readChartsJS = `(() => Array.from(document.querySelectorAll("#analysis figure.chart")).map(f => ({
  metric: f.dataset.metric,
  verdict: f.dataset.verdict,
  outcomes: Array.from(f.querySelectorAll("circle.mark")).map(c => c.dataset.outcome),
  values: Array.from(f.querySelectorAll("circle.mark")).map(c => c.dataset.value),
  line: (f.querySelector("polyline.line") || {getAttribute: () => ""}).getAttribute("points") || "",
  aborted: (document.getElementById("aborted") || {textContent: ""}).textContent.trim(),
})))()`

// TestRolloutPage_drawsTheAnalysisMeasurements_live: given a Rollout
// gated at step 1 by a MetricGate whose web metric reads 0.01, 0.02, then
// 0.3, when the release starts, the open page draws the metric's chart as
// it is measured: two successful marks, then a failed one, and the abort
// the failure caused, naming the metric and its value.
func TestRolloutPage_drawsTheAnalysisMeasurements_live(t *testing.T) {
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
	const name = "charted"
	deployment(t, ns, name, 4, "shop:v1", nil)
	createRollout(t, ns, name, "1", "100%")
	g := &analysisv1alpha1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "errors"},
		Spec: analysisv1alpha1.MetricGateSpec{
			Run: analysisv1alpha1.RunPolicy{Steps: []int32{1}},
			Metrics: []analysisv1alpha1.Metric{{Name: "error-rate", Count: 5, Interval: metav1.Duration{Duration: 2 * time.Second},
				SuccessCondition: "result < 0.05",
				Provider:         analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{URL: stats.URL, Method: "GET", JSONPath: "{.errorRate}"}}}},
		},
	}
	if err := suite.c.Create(ctxFor(t), g); err != nil {
		t.Fatalf("creating metricgate: %v", err)
	}
	tab := browser(t)
	open(tab, t, suite.webURL+web.PagePath(ns, name))
	setImage(t, ns, name, "shop:v2")

	charts := waitCharts(tab, t, "a chart of the first measurement", func(cs []chartState) bool {
		return len(cs) == 1 && len(cs[0].Outcomes) >= 1
	})
	if charts[0].Metric != "error-rate" || charts[0].Outcomes[0] != "Successful" || charts[0].Values[0] != "0.01" {
		t.Fatalf("first chart %+v", charts[0])
	}
	charts = waitCharts(tab, t, "two successes, then the failure and the abort", func(cs []chartState) bool {
		return len(cs) == 1 && len(cs[0].Outcomes) == 3 && cs[0].Aborted != ""
	})
	c := charts[0]
	if !reflect.DeepEqual(c.Outcomes, []string{"Successful", "Successful", "Failed"}) || !reflect.DeepEqual(c.Values, []string{"0.01", "0.02", "0.3"}) ||
		c.Verdict != "Failed" || len(strings.Fields(c.Line)) != 3 {
		t.Fatalf("chart %+v, want two successes then the failure, joined by a line", c)
	}
	if !strings.Contains(c.Aborted, "by MetricGate errors via analysis") || !strings.Contains(c.Aborted, "error-rate 0.3") {
		t.Fatalf("aborted box %q, want it to name the gate, the metric and its value", c.Aborted)
	}
	waitRollout(t, ns, name, "aborted", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted })
	screenshot(tab, t, "rollout-analysis-aborted.png")
}

// waitCharts polls the page's charts until cond holds, failing the test
// after a minute with what the page showed last.
func waitCharts(tab context.Context, t *testing.T, what string, cond func([]chartState) bool) []chartState {
	t.Helper()
	var last []chartState
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		last, lastErr = chromedp.Run(ctx, chromedp.Evaluate[[]chartState](readChartsJS))
		return lastErr == nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for the page to show %s: %v; last seen: %+v (read error: %v)", what, err, last, lastErr)
	}
	return last
}
