package gitops

import (
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// The GitGate's conditions follow Flux's conventions (fluxcd/pkg/apis/meta):
// Ready always, Reconciling and Stalled only while True.

func setReady(gg *gitopsv1alpha1.GitGate, status metav1.ConditionStatus, reason, msg string) {
	apimeta.RemoveStatusCondition(&gg.Status.Conditions, meta.StalledCondition)
	apimeta.RemoveStatusCondition(&gg.Status.Conditions, meta.ReconcilingCondition)
	apimeta.SetStatusCondition(&gg.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: gg.Generation})
}

func setFailed(gg *gitopsv1alpha1.GitGate, reason, msg string) {
	apimeta.RemoveStatusCondition(&gg.Status.Conditions, meta.StalledCondition)
	apimeta.SetStatusCondition(&gg.Status.Conditions, metav1.Condition{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue,
		Reason: meta.ProgressingWithRetryReason, Message: "retrying: " + msg, ObservedGeneration: gg.Generation})
	apimeta.SetStatusCondition(&gg.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: gg.Generation})
}

func setStalled(gg *gitopsv1alpha1.GitGate, reason, msg string) {
	apimeta.RemoveStatusCondition(&gg.Status.Conditions, meta.ReconcilingCondition)
	apimeta.SetStatusCondition(&gg.Status.Conditions, metav1.Condition{Type: meta.StalledCondition, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg, ObservedGeneration: gg.Generation})
	apimeta.SetStatusCondition(&gg.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: gg.Generation})
}
