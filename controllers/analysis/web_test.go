package analysis_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	"github.com/sluice-dev/sluice/test/poll"
)

// Given a release paused at step 1 and a MetricGate analysing step 1 with
// a web metric whose endpoint answers an error rate of 1%,
// when the gate measures it three times,
// then the run of step 1 passed, with the three measurements in the
// gate's status, and the Rollout has an AnalysisPassed event.
func TestMetricGate_webMetricWithinItsCondition_passesTheStep(t *testing.T) {
	srv := newStatsServer(t, 0.01)
	ns, ro := releasedApp(t, "checkout")
	createGate(t, gate(ns, "errors", "checkout", webMetric("error-rate", srv.URL+"/stats?rollout=${rollout}&step=${step}", 3)))

	run := waitRun(t, ns, "errors", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	mr := run.Metrics[0]
	if mr.Measured != 3 || mr.Successful != 3 || len(mr.Measurements) != 3 {
		t.Fatalf("metric run %+v: want 3 successful measurements", mr)
	}
	for i, m := range mr.Measurements {
		if m.Index != int32(i+1) || m.Value != "0.01" || m.Outcome != analysisv1alpha1.OutcomeSuccessful {
			t.Errorf("measurement %d: %+v", i, m)
		}
	}
	if run.Message != "error-rate 0.01 (3/3 passed)" {
		t.Errorf("run message %q", run.Message)
	}
	if got := srv.seen(); len(got) < 3 || got[0] != "rollout=checkout&step=1" {
		t.Errorf("requests %v: want the template variables replaced", got)
	}
	eventOf(t, ns, "Rollout", ro.Name, "AnalysisPassed", "MetricGate errors, step 1: error-rate 0.01 (3/3 passed)")
}

// Given the same release and a web metric whose endpoint answers 20%,
// when the gate measures it once,
// then the run failed at once (failureLimit 0), its message names the
// metric, the value and the condition, and the Rollout has an
// AnalysisFailed warning saying so.
func TestMetricGate_webMetricBreakingItsCondition_failsAtTheFirstMeasurement(t *testing.T) {
	srv := newStatsServer(t, 0.2)
	ns, ro := releasedApp(t, "checkout")
	createGate(t, gate(ns, "errors", "checkout", webMetric("error-rate", srv.URL, 5)))

	run := waitRun(t, ns, "errors", "checkout", 1, "Failed", verdictIs(analysisv1alpha1.VerdictFailed))
	if run.Metrics[0].Measured != 1 {
		t.Errorf("measured %d times, want the first failure to end the run", run.Metrics[0].Measured)
	}
	want := "error-rate 0.2: result < 0.05 is false"
	if run.Message != want {
		t.Errorf("run message %q, want %q", run.Message, want)
	}
	eventOf(t, ns, "Rollout", ro.Name, "AnalysisFailed", want)
}

// An endpoint that cannot answer gives Error measurements, which count
// against inconclusiveLimit: one more than it allows makes the run
// Inconclusive, with the error in the message.
func TestMetricGate_unreachableEndpoint_isInconclusivePastItsLimit(t *testing.T) {
	srv := newStatsServer(t, 0)
	url := srv.URL
	srv.Close()
	ns, _ := releasedApp(t, "checkout")
	m := webMetric("error-rate", url, 5)
	m.InconclusiveLimit = 1
	createGate(t, gate(ns, "errors", "checkout", m))

	run := waitRun(t, ns, "errors", "checkout", 1, "Inconclusive", verdictIs(analysisv1alpha1.VerdictInconclusive))
	mr := run.Metrics[0]
	if mr.Measured != 2 || mr.Inconclusive != 2 || mr.Measurements[1].Outcome != analysisv1alpha1.OutcomeError {
		t.Fatalf("metric run %+v: want 2 Error measurements", mr)
	}
	if !strings.Contains(run.Message, "connection refused") || !strings.Contains(run.Message, "(2 inconclusive, inconclusiveLimit 1)") {
		t.Errorf("run message %q", run.Message)
	}
}

// Admission names the field of what the schema cannot check.
func TestMetricGate_admission_namesTheField(t *testing.T) {
	ns := "default"
	tests := []struct {
		name   string
		mutate func(*analysisv1alpha1.MetricGate)
		want   string
	}{
		{name: "condition that does not compile", want: "spec.metrics[0].successCondition",
			mutate: func(g *analysisv1alpha1.MetricGate) { g.Spec.Metrics[0].SuccessCondition = "result <" }},
		{name: "unknown template variable", want: "unknown variable ${canary}",
			mutate: func(g *analysisv1alpha1.MetricGate) { g.Spec.Metrics[0].Provider.Web.URL = "http://x/${canary}" }},
		{name: "steps and background (CRD rule)", want: "spec.run: set exactly one of steps",
			mutate: func(g *analysisv1alpha1.MetricGate) { g.Spec.Run.Background = true }},
		{name: "two providers (CRD rule)", want: "set exactly one of prometheus, web and job",
			mutate: func(g *analysisv1alpha1.MetricGate) {
				g.Spec.Metrics[0].Provider.Prometheus = &analysisv1alpha1.PrometheusMetric{Address: "http://p:9090", Query: "up"}
			}},
		{name: "count 0 in a step analysis (CRD rule)", want: "spec.metrics[].count 0",
			mutate: func(g *analysisv1alpha1.MetricGate) { g.Spec.Metrics[0].Count = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gate(ns, "bad", "x", webMetric("error-rate", "http://127.0.0.1:1/stats", 1))
			tt.mutate(g)
			err := suite.c.Create(t.Context(), g)
			if err == nil {
				_ = suite.c.Delete(t.Context(), g)
				t.Fatalf("created; want a refusal naming %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Headers come from the metric (with template variables) and from a
// Secret whose every key is a header.
func TestMetricGate_webMetric_sendsHeadersFromTheSpecAndASecret(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"errorRate": 0}`))
	}))
	t.Cleanup(srv.Close)
	ns, _ := releasedApp(t, "checkout")
	if err := suite.c.Create(poll.Context(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stats-auth"},
		StringData: map[string]string{"Authorization": "Bearer t0ken"}}); err != nil {
		t.Fatal(err)
	}
	m := webMetric("error-rate", srv.URL, 1)
	m.Provider.Web.Headers = []analysisv1alpha1.HTTPHeader{{Name: "X-Rollout", Value: "${namespace}/${rollout}"}}
	m.Provider.Web.HeadersSecretRef = &meta.LocalObjectReference{Name: "stats-auth"}
	createGate(t, gate(ns, "errors", "checkout", m))

	waitRun(t, ns, "errors", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	mu.Lock()
	defer mu.Unlock()
	if got.Get("X-Rollout") != ns+"/checkout" {
		t.Errorf("X-Rollout %q", got.Get("X-Rollout"))
	}
}
