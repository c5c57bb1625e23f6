package rollout

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
)

// OnProgressDeadlineAnnotation on a Rollout says what a step past its
// progress deadline does: "report" (the default) sets Stalled and records
// an event; "abort" does that and aborts the release, holding it on the
// stable revision as sluice.dev/abort does. It is sluice's own annotation:
// the OpenKruise API stays unchanged.
const OnProgressDeadlineAnnotation = "sluice.dev/on-progress-deadline"

// abortOnProgressDeadline reads ro's OnProgressDeadlineAnnotation; a value
// other than report or abort is reported in an event and reports only.
func (r *Reconciler) abortOnProgressDeadline(ro *rolloutsv1beta1.Rollout) bool {
	switch v, ok := ro.Annotations[OnProgressDeadlineAnnotation]; {
	case !ok || v == "report":
		return false
	case v == "abort":
		return true
	default:
		r.eventOnce(ro, canary.Event{Type: corev1.EventTypeWarning, Reason: "InvalidOnProgressDeadline",
			Message: fmt.Sprintf("Annotation %s=%q is neither report nor abort; reporting only", OnProgressDeadlineAnnotation, v)})
		return false
	}
}

// analysis is what the MetricGates of ro's namespace (as the cache holds
// them) say about its current step; nil when none binds it.
func (r *Reconciler) analysis(ctx context.Context, ro *rolloutsv1beta1.Rollout) (*stepgate.Decision, error) {
	gates := &analysisv1alpha1.MetricGateList{}
	switch err := r.Client.List(ctx, gates, client.InNamespace(ro.Namespace)); {
	case meta.IsNoMatchError(err):
		return nil, nil // the MetricGate CRD is not installed: nothing gates the steps
	case err != nil:
		return nil, fmt.Errorf("listing metricgates: %w", err)
	}
	if len(gates.Items) == 0 {
		return nil, nil
	}
	d := stepgate.For(gates.Items, ro)
	if !d.Analysed() && len(d.Steps) == 0 {
		return nil, nil
	}
	return &d, nil
}

// forMetricGate maps a MetricGate to the Rollouts its selector picks: its
// verdicts gate their steps.
func (r *Reconciler) forMetricGate(ctx context.Context, o client.Object) []ctrl.Request {
	g, ok := o.(*analysisv1alpha1.MetricGate)
	if !ok {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Spec.RolloutSelector)
	if err != nil {
		return nil
	}
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list, client.InNamespace(g.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Rollouts for a MetricGate event")
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		if sel.Matches(labels.Set(list.Items[i].Labels)) {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
