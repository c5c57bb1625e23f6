package notification

import (
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

// The Notifier's conditions follow Flux's conventions
// (fluxcd/pkg/apis/meta): Ready always, Reconciling only while True. A sink
// that fails is not a condition: its notifications wait in the outbox with
// the last error, and the deliveries say when sluice gave up.

func setReady(n *notificationv1alpha1.Notifier, status metav1.ConditionStatus, reason, msg string) {
	apimeta.RemoveStatusCondition(&n.Status.Conditions, meta.ReconcilingCondition)
	apimeta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: n.Generation})
}

func setFailed(n *notificationv1alpha1.Notifier, reason, msg string) {
	apimeta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue,
		Reason: meta.ProgressingWithRetryReason, Message: "retrying: " + msg, ObservedGeneration: n.Generation})
	apimeta.SetStatusCondition(&n.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: n.Generation})
}
