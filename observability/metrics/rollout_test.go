package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/canary"
)

// sample finds the series name{labels} in what reg gathers: its value (a
// histogram's sample count), and whether it exists.
func sample(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
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
			return valueOf(m), true
		}
	}
	return 0, false
}

func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func rolloutWith(st rolloutsv1beta1.RolloutStatus) *rolloutsv1beta1.Rollout {
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "checkout"}}
	ro.Spec.WorkloadRef = rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "checkout"}
	ro.Spec.Strategy.Canary = &rolloutsv1beta1.CanaryStrategy{Steps: make([]rolloutsv1beta1.CanaryStep, 3)}
	ro.Status = st
	return ro
}

func status(phase rolloutsv1beta1.RolloutPhase, step int32, state rolloutsv1beta1.CanaryStepState, rev, reason string) rolloutsv1beta1.RolloutStatus {
	return rolloutsv1beta1.RolloutStatus{
		Phase: phase,
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus:   rolloutsv1beta1.CommonStatus{CurrentStepIndex: step, CurrentStepState: state, StableRevision: "a"},
			CanaryRevision: rev,
		},
		Conditions: []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionProgressing, Status: corev1.ConditionTrue, Reason: reason}},
	}
}

// TestRolloutObserver_release_movesSeriesStepByStep walks one Rollout
// through a release, an approval, a step's duration, a rollback and its
// deletion, checking the series after each transition.
func TestRolloutObserver_release_movesSeriesStepByStep(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC))
	rec := events.NewFakeRecorder(10)
	o := m.Rollouts(rec, clk)
	ro := map[string]string{labelNamespace: "demo", labelRollout: "checkout"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range ro {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	want := func(what, name string, labels map[string]string, v float64) {
		t.Helper()
		got, ok := sample(t, reg, name, labels)
		if !ok || got != v {
			t.Fatalf("%s: %s%v = %v (present %v), want %v", what, name, labels, got, ok, v)
		}
	}
	const inRolling, cancelling = rolloutsv1beta1.ProgressingReasonInRolling, rolloutsv1beta1.ProgressingReasonCancelling
	healthyA := status(healthy, 3, completed, "a", rolloutsv1beta1.ProgressingReasonCompleted)
	step1Upgrading := status(progressing, 1, upgrade, "b", inRolling)
	step1Paused := status(progressing, 1, paused, "b", inRolling)
	step2Upgrading := status(progressing, 2, upgrade, "b", inRolling)
	step2Paused := status(progressing, 2, paused, "b", inRolling)
	cancel := status(progressing, 2, paused, "b", cancelling)

	// Given a healthy Rollout, when a release starts at step 1:
	o.Observe(context.Background(), rolloutWith(healthyA), rolloutWith(step1Upgrading), canary.Actions{Events: []canary.Event{{Reason: "Progressing"}}})
	want("release started", "sluice_rollout_step", ro, 1)
	want("release started", "sluice_rollout_steps", ro, 3)
	want("release started", "sluice_rollout_info", with(map[string]string{labelPhase: "Progressing", labelState: "StepUpgrade", labelKind: "Deployment"}), 1)
	if _, ok := sample(t, reg, "sluice_batches_released_total", ro); ok {
		t.Fatal("a batch counted before step 1 was upgraded")
	}

	// When step 1's pods are ready, the batch counts, and the info series
	// moves to the new state (the old one is gone).
	clk.SetTime(clk.Now().Add(20 * time.Second))
	o.Observe(context.Background(), rolloutWith(step1Upgrading), rolloutWith(step1Paused), canary.Actions{})
	want("step 1 released", "sluice_batches_released_total", ro, 1)
	want("step 1 paused", "sluice_rollout_info", with(map[string]string{labelState: "StepPaused"}), 1)
	if _, ok := sample(t, reg, "sluice_rollout_info", with(map[string]string{labelState: "StepUpgrade"})); ok {
		t.Fatal("the info series of the previous state is still there")
	}

	// When step 1 is approved by a status patch 40s later, step 2 begins:
	// the approval counts by source and step 1's duration (60s) is observed.
	clk.SetTime(clk.Now().Add(40 * time.Second))
	o.Observe(context.Background(), rolloutWith(step1Paused), rolloutWith(step2Upgrading), canary.Actions{
		Approved: &approval.Approval{Step: 1, Via: "status"}, Events: []canary.Event{{Reason: "Approved"}}})
	want("step 2", "sluice_rollout_step", ro, 2)
	want("approved", "sluice_approvals_total", with(map[string]string{labelSource: "status-patch"}), 1)
	want("step 1 left", "sluice_rollout_step_duration_seconds", ro, 1)
	if got := <-rec.Events; !strings.Contains(got, "StepStarted") {
		t.Fatalf("event = %q, want StepStarted", got)
	}
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "sluice_rollout_step_duration_seconds" {
			if sum := f.GetMetric()[0].GetHistogram().GetSampleSum(); sum != 60 {
				t.Fatalf("step 1 lasted %vs, want 60", sum)
			}
		}
	}

	// When step 2 is upgraded and then the template goes back: one
	// immediate rollback.
	o.Observe(context.Background(), rolloutWith(step2Upgrading), rolloutWith(step2Paused), canary.Actions{})
	want("step 2 released", "sluice_batches_released_total", ro, 2)
	o.Observe(context.Background(), rolloutWith(step2Paused), rolloutWith(cancel), canary.Actions{})
	o.Observe(context.Background(), rolloutWith(cancel), rolloutWith(cancel), canary.Actions{})
	want("rolled back", "sluice_rollbacks_total", with(map[string]string{labelRollback: "immediate"}), 1)

	// When the Rollout is deleted, its series go.
	o.Observe(context.Background(), rolloutWith(cancel), rolloutWith(cancel), canary.Actions{RemoveFinalizer: true})
	for _, name := range []string{"sluice_rollout_info", "sluice_rollout_step", "sluice_rollout_steps", "sluice_rollout_step_duration_seconds",
		"sluice_batches_released_total", "sluice_approvals_total", "sluice_rollbacks_total"} {
		if _, ok := sample(t, reg, name, ro); ok {
			t.Errorf("%s of the deleted Rollout is still there", name)
		}
	}
}

// TestNew_registeredTwice_reusesCollectors checks that a manager started
// again in the same process carries on with the same series.
func TestNew_registeredTwice_reusesCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	first.Request("get-pull-request", "200")
	second, err := New(reg)
	if err != nil {
		t.Fatalf("registering again: %v", err)
	}
	second.Request("get-pull-request", "200")
	second.RateLimit(4999)
	second.Delivery(false, "bad-signature")
	if v, _ := sample(t, reg, "sluice_scm_requests_total", map[string]string{labelOperation: "get-pull-request", labelStatus: "200"}); v != 2 {
		t.Errorf("sluice_scm_requests_total = %v, want 2", v)
	}
	if v, _ := sample(t, reg, "sluice_scm_rate_limit_remaining", nil); v != 4999 {
		t.Errorf("sluice_scm_rate_limit_remaining = %v, want 4999", v)
	}
	if v, _ := sample(t, reg, "sluice_webhook_deliveries_total", map[string]string{labelResult: "rejected", labelReason: "bad-signature"}); v != 1 {
		t.Errorf("sluice_webhook_deliveries_total = %v, want 1", v)
	}
}

// TestNilObservers_recordNothing checks that unwired observers are safe.
func TestNilObservers_recordNothing(_ *testing.T) {
	var m *Metrics
	m.Request("op", "200")
	m.RateLimit(1)
	m.Delivery(true, "push")
	var o *RolloutObserver
	o.Observe(context.Background(), rolloutWith(rolloutsv1beta1.RolloutStatus{}), rolloutWith(rolloutsv1beta1.RolloutStatus{}), canary.Actions{})
}
