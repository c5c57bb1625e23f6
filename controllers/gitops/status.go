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

// CommitStatusesCondition says whether the gate posts commit statuses and
// reads pull-request labels, and why not.
const CommitStatusesCondition = "CommitStatuses"

// Reasons of the CommitStatuses condition.
const (
	// ReasonStatusesPosted: the gate posts statuses on its SCM host.
	ReasonStatusesPosted = "Posted"
	// ReasonNoSCM: the gate names no SCM host; it works from Git alone.
	ReasonNoSCM = "NoSCMHost"
	// ReasonStatusesDisabled: spec.status.disabled.
	ReasonStatusesDisabled = "Disabled"
)

// setCommitStatuses sets the CommitStatuses condition from the spec.
func setCommitStatuses(gg *gitopsv1alpha1.GitGate) {
	c := metav1.Condition{Type: CommitStatusesCondition, Status: metav1.ConditionTrue, Reason: ReasonStatusesPosted,
		Message: "commit statuses are posted on " + repositoryOf(gg) + " and its pull requests' labels are read", ObservedGeneration: gg.Generation}
	switch {
	case scmRepositoryOf(gg) == nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNoSCM
		c.Message = "no spec.scm nor spec.github: commit statuses are off and no pull-request label is read; trailers, reverts and declarative approvals work from Git alone"
	case gg.Spec.Status.Disabled:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonStatusesDisabled
		c.Message = "spec.status.disabled: commit statuses are off; pull-request labels are read on " + repositoryOf(gg)
	}
	apimeta.SetStatusCondition(&gg.Status.Conditions, c)
}
