package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
)

// RolloutObserver turns the status transitions of Rollouts into series and
// events. It is safe for concurrent use.
type RolloutObserver struct {
	metrics  *Metrics
	recorder events.EventRecorder
	clock    clock.PassiveClock

	mu sync.Mutex
	// entered is when each releasing Rollout entered its current step;
	// a zero time means it was already in it when first seen.
	entered map[types.NamespacedName]stepMark
	// infos are the labels of each Rollout's info series.
	infos map[types.NamespacedName]info
}

// info are the labels of a Rollout's info series besides its name.
type info struct{ phase, state, kind string }

// stepMark is when a Rollout entered a step.
type stepMark struct {
	key stepKey
	at  time.Time
}

// Rollouts returns the observer the Rollout controller calls; recorder
// (optional) receives the events of transitions the step machine does not
// event itself.
func (m *Metrics) Rollouts(recorder events.EventRecorder, clk clock.PassiveClock) *RolloutObserver {
	return &RolloutObserver{metrics: m, recorder: recorder, clock: clk, entered: map[types.NamespacedName]stepMark{},
		infos: map[types.NamespacedName]info{}}
}

// Observe records the transition of a Rollout from before (as read) to
// after (as written), given the actions the step machine asked for. Call it
// once the status is written, so that a failed write is not counted twice.
func (o *RolloutObserver) Observe(ctx context.Context, before, after *rolloutsv1beta1.Rollout, act canary.Actions) {
	if o == nil || o.metrics == nil {
		return
	}
	key := types.NamespacedName{Namespace: after.Namespace, Name: after.Name}
	if act.RemoveFinalizer {
		o.forget(key)
		return
	}
	m, ns, name := o.metrics, after.Namespace, after.Name
	old, cur := viewOf(before), viewOf(after)
	steps := len(after.Spec.Strategy.Steps())

	o.setInfo(key, info{phase: string(cur.phase), state: string(cur.state), kind: after.Spec.WorkloadRef.Kind})
	m.rolloutStep.WithLabelValues(ns, name).Set(float64(cur.step))
	m.rolloutSteps.WithLabelValues(ns, name).Set(float64(steps))
	if n := batchesReleased(old, cur); n > 0 {
		m.batchesReleased.WithLabelValues(ns, name).Add(float64(n))
	}
	if act.Approved != nil {
		m.approvals.WithLabelValues(ns, name, approvalSource(act.Approved.Via)).Inc()
	}
	if kind := rollbackStarted(old, cur); kind != "" {
		m.rollbacks.WithLabelValues(ns, name, kind).Inc()
	}
	o.timeStep(key, old, cur)
	if old.phase != cur.phase || old.step != cur.step || old.state != cur.state || old.revision != cur.revision {
		ctrl.LoggerFrom(ctx).Info("Release moved", "phase", cur.phase, "step", cur.step, "steps", steps,
			"state", cur.state, "revision", cur.revision, "fromPhase", old.phase, "fromStep", old.step, "fromState", old.state)
	}

	if o.recorder == nil {
		return
	}
	evented := make([]string, 0, len(act.Events))
	for _, e := range act.Events {
		evented = append(evented, e.Reason)
	}
	for _, e := range transitionEvents(old, cur, steps, evented) {
		o.recorder.Eventf(after, nil, e.Type, e.Reason, "Release", "%s", e.Message)
	}
}

// setInfo sets the Rollout's info series, replacing the one with other
// labels. The new one is set before the old one goes, so that a scrape
// always sees one; on first sight (e.g. by a manager started again in the
// same process) any left from before go first.
func (o *RolloutObserver) setInfo(key types.NamespacedName, cur info) {
	o.mu.Lock()
	prev, known := o.infos[key]
	o.infos[key] = cur
	o.mu.Unlock()
	if known && prev == cur {
		return
	}
	if !known {
		o.metrics.rolloutInfo.DeletePartialMatch(prometheus.Labels{labelNamespace: key.Namespace, labelRollout: key.Name})
	}
	o.metrics.rolloutInfo.WithLabelValues(key.Namespace, key.Name, cur.phase, cur.state, cur.kind).Set(1)
	if known {
		o.metrics.rolloutInfo.DeleteLabelValues(key.Namespace, key.Name, prev.phase, prev.state, prev.kind)
	}
}

// timeStep observes the duration of a step the Rollout left, and notes
// when it entered the one it is in.
func (o *RolloutObserver) timeStep(key types.NamespacedName, old, cur view) {
	now := o.clock.Now()
	oldKey, wasIn := old.current()
	curKey, isIn := cur.current()
	o.mu.Lock()
	defer o.mu.Unlock()
	mark, known := o.entered[key]
	if wasIn && (!isIn || curKey != oldKey) && known && mark.key == oldKey && !mark.at.IsZero() {
		o.metrics.stepDuration.WithLabelValues(key.Namespace, key.Name).Observe(now.Sub(mark.at).Seconds())
	}
	switch {
	case !isIn:
		delete(o.entered, key)
	case !wasIn || curKey != oldKey:
		o.entered[key] = stepMark{key: curKey, at: now}
	case !known || mark.key != curKey:
		// Already in this step when first seen (e.g. after a restart):
		// its start is unknown, so its duration is not observed.
		o.entered[key] = stepMark{key: curKey}
	}
}

// forget deletes a deleted Rollout's series.
func (o *RolloutObserver) forget(key types.NamespacedName) {
	o.mu.Lock()
	delete(o.entered, key)
	delete(o.infos, key)
	o.mu.Unlock()
	m := o.metrics
	labels := prometheus.Labels{labelNamespace: key.Namespace, labelRollout: key.Name}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.rolloutInfo, m.rolloutStep, m.rolloutSteps, m.stepDuration, m.batchesReleased, m.approvals, m.rollbacks,
	} {
		v.DeletePartialMatch(labels)
	}
}
