package notification

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/notification/sink"
	"github.com/sluice-dev/sluice/notification/sinks"
	"github.com/sluice-dev/sluice/notification/transition"
	"github.com/sluice-dev/sluice/release/progress"
)

// reconcileQueue queues the new transitions of every bound Rollout.
func (r *Reconciler) reconcileQueue(ctx context.Context, n *notificationv1alpha1.Notifier) error {
	sel, err := metav1.LabelSelectorAsSelector(&n.Spec.RolloutSelector)
	if err != nil {
		return fmt.Errorf("spec.rolloutSelector: %w", err)
	}
	rollouts := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, rollouts, client.InNamespace(n.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing rollouts: %w", err)
	}
	mgs := &analysisv1alpha1.MetricGateList{}
	if err := r.Client.List(ctx, mgs, client.InNamespace(n.Namespace)); err != nil {
		return fmt.Errorf("listing metricgates: %w", err)
	}
	ggs := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, ggs, client.InNamespace(n.Namespace)); err != nil {
		return fmt.Errorf("listing gitgates: %w", err)
	}
	now := r.Clock.Now()
	bound := map[string]bool{}
	for i := range rollouts.Items {
		ro := &rollouts.Items[i]
		bound[ro.Name] = true
		obs := transition.Observed{Rollout: ro, Commit: commitOf(ggs.Items, ro), Failures: failuresOf(mgs.Items, ro), Now: now}
		for _, q := range queue(&n.Status, &n.Spec, ro.Name, transition.Implied(obs)) {
			ctrl.LoggerFrom(ctx).Info("Queued a notification", "rollout", client.ObjectKeyFromObject(ro), "event", q.Event, "key", q.Key)
		}
	}
	forget(&n.Status, bound)
	overflow(&n.Status, metav1.NewTime(now))
	n.Status.BoundRollouts = int32(len(rollouts.Items)) //nolint:gosec // bounded by the list
	return nil
}

// reconcileDelivery tries every due notification on the sinks still to
// take it, and returns when the next attempt is due (zero: none waits).
func (r *Reconciler) reconcileDelivery(ctx context.Context, n *notificationv1alpha1.Notifier) time.Time {
	built := map[string]sink.Sink{}
	buildErr := map[string]error{}
	sinkFor := func(name string) (sink.Sink, error) {
		if s, ok := built[name]; ok {
			return s, buildErr[name]
		}
		var spec *notificationv1alpha1.Sink
		for i := range n.Spec.Sinks {
			if n.Spec.Sinks[i].Name == name {
				spec = &n.Spec.Sinks[i]
			}
		}
		if spec == nil {
			built[name], buildErr[name] = nil, fmt.Errorf("sink %s is no longer in spec.sinks", name)
			return nil, buildErr[name]
		}
		s, err := sinks.For(ctx, spec, n.Namespace, r.Sinks)
		built[name], buildErr[name] = s, err
		return s, err
	}
	var next time.Time
	keep := n.Status.Outbox[:0]
	for i := range n.Status.Outbox {
		e := n.Status.Outbox[i]
		if !due(&e, r.Clock.Now()) {
			keep = append(keep, e)
			next = earliest(next, e.NextAttempt.Time)
			continue
		}
		var left, errs []string
		for _, name := range e.Sinks {
			s, err := sinkFor(name)
			if err == nil {
				sendCtx, cancel := context.WithTimeout(ctx, sinks.Timeout)
				err = s.Send(sendCtx, e.Notification)
				cancel()
			}
			if err != nil {
				left, errs = append(left, name), append(errs, name+": "+err.Error())
			}
		}
		now := metav1.NewTime(r.Clock.Now())
		if len(left) == 0 {
			done(&n.Status, &e, true, "", now)
			continue
		}
		e.Sinks = left
		msg := strings.Join(errs, "; ")
		if failed(&e, msg, now) {
			done(&n.Status, &e, false, "gave up: "+msg, now)
			r.Recorder.Eventf(n, nil, corev1.EventTypeWarning, "NotificationFailed", "Deliver",
				"Gave up on %s of rollout %s after %d attempts: %s", e.Notification.Event, e.Notification.Rollout, e.Attempts, msg)
			continue
		}
		keep = append(keep, e)
		next = earliest(next, e.NextAttempt.Time)
	}
	n.Status.Outbox = keep
	return next
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// commitOf is the commit a GitGate bound to ro knows it is releasing.
func commitOf(gates []gitopsv1alpha1.GitGate, ro *rolloutsv1beta1.Rollout) string {
	p, _ := progress.Of(ro)
	for i := range gates {
		if !gates[i].Binds(ro.Labels) {
			continue
		}
		for _, b := range gates[i].Status.Rollouts {
			if b.Name == ro.Name && b.Revision != "" && (b.CanaryRevision == "" || b.CanaryRevision == p.Revision) {
				return b.Revision
			}
		}
	}
	return ""
}

// failuresOf are the failed runs of ro's current release in the
// MetricGates bound to it.
func failuresOf(gates []analysisv1alpha1.MetricGate, ro *rolloutsv1beta1.Rollout) []transition.AnalysisFailure {
	p, ok := progress.Of(ro)
	if !ok {
		return nil
	}
	var out []transition.AnalysisFailure
	for i := range gates {
		g := &gates[i]
		if !selects(g.Spec.RolloutSelector, ro) {
			continue
		}
		ra := g.Status.RolloutAnalysisOf(ro.Name)
		if ra == nil || ra.Revision != p.NewPodRevision() || ra.RolloutID != p.Common.ObservedRolloutID {
			continue
		}
		for _, run := range ra.Runs {
			if run.Verdict == analysisv1alpha1.VerdictFailed {
				out = append(out, transition.AnalysisFailure{Gate: g.Name, Step: run.Step, Message: run.Message,
					Aborts: g.Spec.OnFailureOrDefault() == analysisv1alpha1.FailureAbort, Started: run.StartedAt.Time})
			}
		}
	}
	return out
}

func selects(s metav1.LabelSelector, ro *rolloutsv1beta1.Rollout) bool {
	sel, err := metav1.LabelSelectorAsSelector(&s)
	return err == nil && sel.Matches(labels.Set(ro.Labels))
}
