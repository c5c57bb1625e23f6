package analysis

import (
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// The MetricGate's conditions follow Flux's conventions
// (fluxcd/pkg/apis/meta): Ready always, Reconciling only while True. A
// metric that cannot be measured is not a condition of the gate: it is an
// Error measurement in the run that needed it.

func setReady(g *analysisv1alpha1.MetricGate, status metav1.ConditionStatus, reason, msg string) {
	apimeta.RemoveStatusCondition(&g.Status.Conditions, meta.ReconcilingCondition)
	apimeta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: g.Generation})
}

func setFailed(g *analysisv1alpha1.MetricGate, reason, msg string) {
	apimeta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue,
		Reason: meta.ProgressingWithRetryReason, Message: "retrying: " + msg, ObservedGeneration: g.Generation})
	apimeta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: g.Generation})
}
