package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// freeAddr asks the kernel for a free loopback address for the manager's
// metrics endpoint.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port for metrics: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// scrape is one read of the manager's metrics endpoint.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads the running manager's metrics endpoint.
func scrapeMetrics(ctx context.Context) (scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, suite.metricsURL, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", suite.metricsURL, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// value is the value of the series name whose labels include labels (a
// histogram's sample count), and whether there is one.
func (s scrape) value(name string, labels map[string]string) (float64, bool) {
	f, ok := s[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// series is one expected value of the metrics endpoint.
type series struct {
	name   string
	labels map[string]string
	want   float64
}

// waitSeries scrapes until every series has its wanted value.
func waitSeries(t *testing.T, what string, want ...series) {
	t.Helper()
	eventually(t, "metrics "+what, func() (bool, string) {
		s, err := scrapeMetrics(ctxFor(t))
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if got, ok := s.value(w.name, w.labels); !ok || got != w.want {
				return false, fmt.Sprintf("%s%v = %v (present %v), want %v", w.name, w.labels, got, ok, w.want)
			}
		}
		return true, ""
	})
}

// Given a Deployment of 4 pods and a Rollout with steps 1 / 50% / 100%
// When a release is approved by annotation, then by status patch, and a
// second release is rolled back by setting the template back
// Then the manager's metrics endpoint follows each step: the step gauge
// goes 1, 2, then done; batches, approvals by source, step durations and the
// rollback are counted; and the Rollout's series go when it is deleted.
func TestMetrics_release_seriesFollowSteps(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	ro := map[string]string{"namespace": ns, "rollout": "web"}
	with := func(k, v string, more ...string) map[string]string {
		out := map[string]string{"namespace": ns, "rollout": "web", k: v}
		for i := 0; i+1 < len(more); i += 2 {
			out[more[i]] = more[i+1]
		}
		return out
	}
	waitSeries(t, "of a healthy Rollout",
		series{"sluice_rollout_info", with("phase", "Healthy", "state", "Completed", "workload_kind", "Deployment"), 1},
		series{"sluice_rollout_steps", ro, 3},
	)

	// Step 1: one pod on the new revision.
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v2] != 1 || got[v1] != 3 {
		t.Fatalf("step 1: pods by image %v, want 1 new and 3 old", got)
	}
	assertHeld(t, ns, "web")
	waitSeries(t, "at step 1",
		series{"sluice_rollout_step", ro, 1},
		series{"sluice_rollout_info", with("phase", "Progressing", "state", "StepPaused"), 1},
		series{"sluice_batches_released_total", ro, 1},
	)

	// Step 2, approved by annotation: two pods on the new revision.
	if err := annotate(t, ns, "web", rolloutsv1beta1.ApproveAnnotation, "1"); err != nil {
		t.Fatal(err)
	}
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v2] != 2 || got[v1] != 2 {
		t.Fatalf("step 2: pods by image %v, want 2 new and 2 old", got)
	}
	assertHeld(t, ns, "web")
	waitSeries(t, "at step 2",
		series{"sluice_rollout_step", ro, 2},
		series{"sluice_batches_released_total", ro, 2},
		series{"sluice_approvals_total", with("source", "annotation"), 1},
		series{"sluice_rollout_step_duration_seconds", ro, 1},
	)
	waitEvent(t, ns, "StepStarted")

	// Done, approved by status patch: every pod on the new revision.
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	waitSeries(t, "after the release",
		series{"sluice_rollout_step", ro, 3},
		series{"sluice_rollout_info", with("phase", "Healthy", "state", "Completed"), 1},
		series{"sluice_batches_released_total", ro, 3},
		series{"sluice_approvals_total", with("source", "status-patch"), 1},
		series{"sluice_approvals_total", with("source", "annotation"), 1},
		series{"sluice_rollout_step_duration_seconds", ro, 3},
	)
	if s, err := scrapeMetrics(ctxFor(t)); err != nil {
		t.Fatal(err)
	} else if _, ok := s.value("sluice_rollbacks_total", ro); ok {
		t.Fatal("a rollback counted before any")
	}

	// A second release, rolled back at step 1 by setting the template back.
	setImage(t, ns, "web", v3)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v3] != 1 || got[v2] != 3 {
		t.Fatalf("second release, step 1: pods by image %v, want 1 on v3 and 3 on v2", got)
	}
	waitSeries(t, "at step 1 of the second release",
		series{"sluice_rollout_step", ro, 1},
		series{"sluice_batches_released_total", ro, 4},
	)
	setImage(t, ns, "web", v2)
	waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Reason == "RolledBack"
	})
	waitDeploymentComplete(t, ns, "web", v2)
	waitSeries(t, "after the rollback",
		series{"sluice_rollbacks_total", with("kind", "immediate"), 1},
		series{"sluice_rollout_info", with("phase", "Healthy", "state", "Completed"), 1},
		series{"sluice_batches_released_total", ro, 4},
	)

	// Deleting the Rollout removes its series.
	if err := suite.c.Delete(ctxFor(t), &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatalf("deleting rollout: %v", err)
	}
	eventually(t, "series of the deleted Rollout gone", func() (bool, string) {
		s, err := scrapeMetrics(ctxFor(t))
		if err != nil {
			return false, err.Error()
		}
		for name := range s {
			if _, ok := s.value(name, ro); ok && slices.Contains(rolloutSeries, name) {
				return false, name + " still there"
			}
		}
		return true, ""
	})
}

// Given a release of v2 paused at step 2 of 1 / 50% / 100% (2 of 4 pods) of
// a Rollout annotated rollouts.kruise.io/rollback-in-batch: "true"
// When the image is set back to v1
// Then one in-batch rollback is counted, none immediate, and the step gauge
// starts again at 1 with the rollback's first batch counted.
func TestMetrics_rollbackInBatch_countedOnce(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	r := newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil))
	r.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	createRollout(t, r)
	ro := map[string]string{"namespace": ns, "rollout": "web"}
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	release := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused).Status.CanaryStatus.CanaryRevision
	if got := podImages(t, ns, "web"); got[v2] != 2 || got[v1] != 2 {
		t.Fatalf("step 2: pods by image %v, want 2 new and 2 old", got)
	}
	waitSeries(t, "at step 2", series{"sluice_rollout_step", ro, 2}, series{"sluice_batches_released_total", ro, 2})

	setImage(t, ns, "web", v1)
	waitRollout(t, ns, "web", "rollback step 1 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
			r.Status.CanaryStatus.CanaryRevision != release
	})
	if got := podImages(t, ns, "web"); got[v1] != 3 || got[v2] != 1 {
		t.Fatalf("rollback step 1: pods by image %v, want 3 on v1 and 1 on v2", got)
	}
	assertHeld(t, ns, "web")
	waitSeries(t, "at rollback step 1",
		series{"sluice_rollbacks_total", map[string]string{"namespace": ns, "rollout": "web", "kind": "in-batch"}, 1},
		series{"sluice_rollout_step", ro, 1},
		series{"sluice_batches_released_total", ro, 3},
	)
	s, err := scrapeMetrics(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.value("sluice_rollbacks_total", map[string]string{"namespace": ns, "rollout": "web", "kind": "immediate"}); ok {
		t.Fatalf("an in-batch rollback also counted as immediate (%v)", v)
	}
}

// rolloutSeries are the series with a Rollout's labels.
var rolloutSeries = []string{"sluice_rollout_info", "sluice_rollout_step", "sluice_rollout_steps",
	"sluice_rollout_step_duration_seconds", "sluice_batches_released_total", "sluice_approvals_total", "sluice_rollbacks_total"}

// waitEvent waits for an event with reason about the Rollout web in ns.
func waitEvent(t *testing.T, ns, reason string) {
	t.Helper()
	eventually(t, "event "+reason, func() (bool, string) {
		list, err := suite.kube.EventsV1().Events(ns).List(ctxFor(t), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Rollout" && e.Regarding.Name == "web" && e.Reason == reason {
				return true, ""
			}
			seen = append(seen, e.Reason)
		}
		return false, fmt.Sprint(seen)
	})
}
