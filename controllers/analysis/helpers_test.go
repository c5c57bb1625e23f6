package analysis_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/poll"
	"github.com/sluice-dev/sluice/test/release"
)

// releasedApp starts a release of app name, paused at step 1: the moment
// a step analysis starts.
func releasedApp(t *testing.T, name string) (ns string, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	return release.PausedAtStep1(t, suite.c, "analysis", name)
}

// gate builds a MetricGate of ns binding app=<app> at step 1.
func gate(ns, name, app string, metrics ...analysisv1alpha1.Metric) *analysisv1alpha1.MetricGate {
	return &analysisv1alpha1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: analysisv1alpha1.MetricGateSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Metrics:         metrics,
			Run:             analysisv1alpha1.RunPolicy{Steps: []int32{1}},
		},
	}
}

func createGate(t *testing.T, g *analysisv1alpha1.MetricGate) {
	t.Helper()
	if err := suite.c.Create(poll.Context(t), g); err != nil {
		t.Fatalf("creating metricgate %s: %v", g.Name, err)
	}
}

// waitRun waits until the gate's run of step for rollout satisfies cond,
// and returns it.
func waitRun(t *testing.T, ns, gateName, rollout string, step int32, what string, cond func(*analysisv1alpha1.AnalysisRun) bool) *analysisv1alpha1.AnalysisRun {
	t.Helper()
	var run *analysisv1alpha1.AnalysisRun
	poll.Until(t, fmt.Sprintf("metricgate %s, rollout %s step %d: %s", gateName, rollout, step, what), func() (bool, string) {
		g := &analysisv1alpha1.MetricGate{}
		if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: gateName}, g); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(g.Status)
		ra := g.Status.RolloutAnalysisOf(rollout)
		if ra == nil {
			return false, string(b)
		}
		run = ra.RunOf(step)
		return run != nil && cond(run), string(b)
	})
	return run
}

func verdictIs(v analysisv1alpha1.Verdict) func(*analysisv1alpha1.AnalysisRun) bool {
	return func(r *analysisv1alpha1.AnalysisRun) bool { return r.Verdict == v && r.FinishedAt != nil }
}

// webMetric measures the JSON field errorRate of url, every second.
func webMetric(name, url string, count int32) analysisv1alpha1.Metric {
	return analysisv1alpha1.Metric{
		Name:             name,
		Provider:         analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{URL: url, Method: "GET", JSONPath: "{.errorRate}"}},
		Interval:         metav1.Duration{Duration: time.Second},
		Count:            count,
		SuccessCondition: "result < 0.05",
	}
}

// statsServer serves {"errorRate": <rate>} on 127.0.0.1 and counts the
// requests, recording the query strings.
type statsServer struct {
	*httptest.Server
	mu       sync.Mutex
	rate     float64
	requests []string
}

func newStatsServer(t *testing.T, rate float64) *statsServer {
	s := &statsServer{rate: rate}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.RawQuery)
		rate := s.rate
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"errorRate": %g}`, rate)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *statsServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// eventOf waits for an event with reason about the object of kind and
// name in ns whose note contains text.
func eventOf(t *testing.T, ns, kind, name, reason, text string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("event %s on %s %s containing %q", reason, kind, name, text), func() (bool, string) {
		list := &eventsv1.EventList{}
		if err := suite.c.List(poll.Context(t), list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason && strings.Contains(e.Note, text) {
				return true, ""
			}
		}
		return false, strings.Join(seen, " | ")
	})
}

// setRate changes the error rate served from now on.
func (s *statsServer) setRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate = rate
}
