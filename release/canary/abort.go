package canary

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
)

// An abort holds a release on its stable revision without changing the pod
// template, which belongs to whoever applies the workload (a GitOps tool
// puts it back): every request goes back to the stable pods first, then the
// BatchRelease moves every pod back to the stable revision and keeps the
// workload held, then the Services and routes get back what they had before
// the release. While aborted, re-applies of the same template change
// nothing and approvals are refused; the release ends when the template
// changes (set back to the stable revision: the rollback completes and the
// workload is handed back; a new revision: a new release from step 1), or
// when it is retried (the same revision again from step 1).

// StalledReasonCannotHoldStable is the reason of the Stalled condition of
// an aborted release whose workload's kind cannot run the stable revision
// again without its pod template changing.
const StalledReasonCannotHoldStable = "CannotHoldStable"

// releaseSince is when the current release (or, without one, the last)
// started or ended: the last transition of the Progressing condition. A
// request older than it was written for an earlier one.
func (m *machine) releaseSince() time.Time {
	if c := m.condition(rolloutsv1beta1.RolloutConditionProgressing); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// refuseRequest reports a request that applies to nothing, once.
func (m *machine) refuseRequest(reason, what string, r abort.Request, why string) {
	at := ""
	if r.At != nil {
		at = " at " + r.At.UTC().Format(time.RFC3339)
	}
	m.act.Events = append(m.act.Events, Event{Type: corev1.EventTypeWarning, Reason: reason, Once: true,
		Message: fmt.Sprintf("%s %s%s ignored: %s", what, r.Describe(), at, why)})
}

// abortRequest returns the abort request that applies to the release in
// progress, if any; a fresh one that applies to nothing is reported.
func (m *machine) abortRequest() *abort.Request {
	r := m.obs.Abort
	if r == nil || !r.NewerThan(m.releaseSince()) {
		return nil
	}
	cs := m.canary()
	switch {
	case m.obs.Retry != nil && m.obs.Retry.Revision == r.Revision && !r.NewerThan(ptrDeref(m.obs.Retry.At)):
		return nil // a retry of that revision came after it
	case r.Revision != cs.Revision:
		m.refuseRequest("AbortIgnored", rolloutsv1beta1.AbortAnnotation, *r,
			fmt.Sprintf("it names revision %q, the release is of %s", r.Revision, cs.Revision))
		return nil
	case rollingBack(cs):
		m.refuseRequest("AbortIgnored", rolloutsv1beta1.AbortAnnotation, *r,
			"a rollback in batches to revision "+cs.Revision+" is in progress; set the template of another revision to stop it")
		return nil
	}
	return r
}

// ptrDeref is *t, or the zero time.
func ptrDeref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// refuseAbort reports a fresh abort request when no release can be
// aborted, and why.
func (m *machine) refuseAbort(why string) {
	if r := m.obs.Abort; r != nil && r.NewerThan(m.releaseSince()) {
		m.refuseRequest("AbortIgnored", rolloutsv1beta1.AbortAnnotation, *r, why)
	}
}

// refuseRetry reports a fresh retry request when nothing is aborted.
func (m *machine) refuseRetry() {
	if r := m.obs.Retry; r != nil && r.NewerThan(m.releaseSince()) {
		m.refuseRequest("RetryIgnored", rolloutsv1beta1.RetryAnnotation, *r, "no release is aborted")
	}
}

// abort starts holding the release in progress on its stable revision.
func (m *machine) abort(r abort.Request) {
	cs := m.canary()
	at := metav1.NewMicroTime(m.obs.Now)
	if r.At != nil {
		at = metav1.NewMicroTime(*r.At)
	}
	if r.Via == "" {
		r.Via = "annotation"
	}
	m.st.Aborted = &rolloutsv1beta1.AbortStatus{
		Revision: cs.Revision, StableRevision: cs.Common.StableRevision,
		Step: cs.Common.CurrentStepIndex, StepState: cs.Common.CurrentStepState,
		By: r.By, Via: r.Via, At: &at, Reason: r.Reason, Commit: r.Commit, PullRequest: r.PullRequest,
	}
	m.st.Phase = rolloutsv1beta1.RolloutPhaseAborted
	why := ""
	if r.Reason != "" {
		why = " (" + r.Reason + ")"
	}
	m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonAborting,
		fmt.Sprintf("Aborted %s at step %d/%d%s: moving every pod and all traffic back to revision %s",
			r.Describe(), cs.Common.CurrentStepIndex, len(m.steps()), why, cs.Common.StableRevision))
	m.event(corev1.EventTypeWarning, "Aborted", "Release of revision %s aborted %s at step %d/%d%s: moving every pod and all traffic back to revision %s",
		cs.Revision, r.Describe(), cs.Common.CurrentStepIndex, len(m.steps()), why, cs.Common.StableRevision)
	m.act.Approved = &approval.Approval{Action: approval.ActionAbort, Revision: cs.Revision, Step: cs.Common.CurrentStepIndex,
		By: r.By, Via: r.Via, At: ptrTime(at.Time), Commit: r.Commit, PullRequest: r.PullRequest}
}

// aborted runs one transition of a Rollout in phase Aborted.
func (m *machine) aborted() {
	ab := m.st.Aborted
	w := m.obs.Workload
	if ab == nil {
		// Aborted without a record of what: nothing to hold on.
		m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInRolling, "Resumed: no abort recorded")
		return
	}
	switch {
	case m.backOnStable(ab.StableRevision):
		// The revert synced: the template is the stable revision again,
		// which every pod may already run. Complete the rollback and hand
		// the workload back.
		m.event(corev1.EventTypeNormal, "RolledBack", "Pod template set back to the stable revision %s after the abort: completing the rollback", ab.StableRevision)
		m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonCancelling, "Rolling back to the stable revision")
		return
	case w.UpToDate:
		m.event(corev1.EventTypeNormal, "Completed", "The aborted revision %s was fully released outside sluice", ab.Revision)
		m.st.Aborted = nil
		m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonFinalising, "Workload fully released outside sluice")
		return
	case w.UpdateRevision != "" && w.UpdateRevision != ab.Revision:
		m.event(corev1.EventTypeNormal, "Restarted", "New revision %s after the abort of %s: releasing it from step 1", w.UpdateRevision, ab.Revision)
		m.restartAfterAbort("Release of revision " + w.UpdateRevision + " detected after the abort of " + ab.Revision)
		return
	}
	if r := m.retryRequest(ab); r != nil {
		m.event(corev1.EventTypeNormal, "Retried", "Release of revision %s retried %s: releasing it again from step 1", ab.Revision, r.Describe())
		at := m.obs.Now
		if r.At != nil {
			at = *r.At
		}
		via := r.Via
		if via == "" {
			via = "annotation"
		}
		m.act.Approved = &approval.Approval{Action: approval.ActionRetry, Revision: ab.Revision, Step: 1, By: r.By, Via: via, At: &at}
		m.restartAfterAbort("Retrying revision " + ab.Revision)
		return
	}
	m.refuseWhileAborted(ab)
	m.holdStable(ab)
}

// restartAfterAbort leaves the aborted state for a new release from step 1
// against the same stable revision.
func (m *machine) restartAfterAbort(why string) {
	m.st.Aborted = nil
	m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
	m.clearCannotHold()
	m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, why)
}

// retryRequest returns the retry request that applies to the abort ab, if
// any; a fresh one that applies to nothing is reported.
func (m *machine) retryRequest(ab *rolloutsv1beta1.AbortStatus) *abort.Request {
	r := m.obs.Retry
	if r == nil || ab.At == nil || !r.NewerThan(ab.At.Time) {
		return nil
	}
	if r.Revision != ab.Revision {
		m.refuseRequest("RetryIgnored", rolloutsv1beta1.RetryAnnotation, *r,
			fmt.Sprintf("it names revision %q, the aborted release is of %s", r.Revision, ab.Revision))
		return nil
	}
	return r
}

// abortedAdvice says what to do about an aborted release.
func (m *machine) abortedAdvice(ab *rolloutsv1beta1.AbortStatus) string {
	return fmt.Sprintf("revert the commit in Git, or push a new one; to release revision %s again: kubectl sluice retry %s -n %s",
		ab.Revision, m.ro.Name, m.ro.Namespace)
}

// refuseWhileAborted undoes and reports approvals and step jumps of an
// aborted release.
func (m *machine) refuseWhileAborted(ab *rolloutsv1beta1.AbortStatus) {
	cs := m.canary()
	why := fmt.Sprintf("the release of revision %s was rolled back %s at step %d; %s",
		ab.Revision, describeAbort(ab), ab.Step, m.abortedAdvice(ab))
	if cs.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateReady && cs.Common.CurrentStepState != ab.StepState {
		m.event(corev1.EventTypeWarning, "ApprovalRefused", "Approval of step %d through the status refused: %s", cs.Common.CurrentStepIndex, why)
	}
	if cs.Common.CurrentStepIndex != ab.Step || cs.Common.CurrentStepState != ab.StepState || cs.Common.NextStepIndex != nextIndex(ab.Step, len(m.steps())) {
		cs.Common.CurrentStepIndex, cs.Common.CurrentStepState = ab.Step, ab.StepState
		cs.Common.NextStepIndex = nextIndex(ab.Step, len(m.steps()))
	}
	if a := m.obs.Approval; a != nil && a.Revision == ab.Revision && a.At != nil && ab.At != nil && !a.At.Before(ab.At.Time) {
		m.act.Events = append(m.act.Events, Event{Type: corev1.EventTypeWarning, Reason: "ApprovalRefused", Once: true,
			Message: fmt.Sprintf("%s of step %d by %s refused: %s", rolloutsv1beta1.ApproveAnnotation, a.Step, a.By, why)})
	}
	if r := m.obs.Abort; r != nil && ab.At != nil && r.NewerThan(ab.At.Add(time.Second)) && r.Revision != ab.Revision {
		m.refuseRequest("AbortIgnored", rolloutsv1beta1.AbortAnnotation, *r,
			fmt.Sprintf("it names revision %q; the release of %s is already aborted", r.Revision, ab.Revision))
	}
}

// holdStable drives the hold of an aborted release: traffic to the stable
// pods, then every pod back on the stable revision, then the Services and
// routes as before the release.
func (m *machine) holdStable(ab *rolloutsv1beta1.AbortStatus) {
	w := m.obs.Workload
	if !m.routed() {
		m.st.Message = "Aborting: routing every request to revision " + ab.StableRevision + ": " + m.routingProgress()
		return
	}
	br := m.obs.BatchRelease
	switch {
	case br != nil && br.Deleting:
		m.st.Message = "Aborting: waiting for the BatchRelease being deleted"
		return
	case br == nil || !br.HoldStable:
		m.act.BatchRelease, m.act.Policy, m.act.HoldStable = EnsureBatchRelease, rolloutsv1beta1.ImmediateFinalizingPolicy, true
		p := max(ab.Step-1, 0)
		if br != nil && br.Partition != nil {
			p = *br.Partition
		}
		m.act.Partition = &p
		m.st.Message = "Aborting: holding the workload on revision " + ab.StableRevision
		return
	case !br.caughtUp() || br.StableHold == "" || br.StableHold == rolloutsv1beta1.StableHoldHolding:
		m.st.Message = fmt.Sprintf("Aborting: moving every pod back to revision %s, %d still on revision %s", ab.StableRevision, w.UpdatedReplicas, ab.Revision)
		if br.Message != "" && br.StableHold == rolloutsv1beta1.StableHoldHolding {
			m.st.Message += " (" + br.Message + ")"
		}
		m.requeue(2 * time.Second)
		return
	case br.StableHold == rolloutsv1beta1.StableHoldBlocked:
		msg := fmt.Sprintf("Aborted, but the pods cannot go back to revision %s: %s; nothing more is released", ab.StableRevision, br.Message)
		if c := m.condition(rolloutsv1beta1.RolloutConditionStalled); c == nil || c.Status != corev1.ConditionTrue || c.Reason != StalledReasonCannotHoldStable {
			m.event(corev1.EventTypeWarning, StalledReasonCannotHoldStable, "%s", msg)
		}
		m.setCondition(rolloutsv1beta1.RolloutConditionStalled, corev1.ConditionTrue, StalledReasonCannotHoldStable, msg)
		m.st.Message = msg
		return
	}
	m.clearCannotHold()
	ab.Held = true
	if !m.routed() {
		m.st.Message = "Aborted: every pod on revision " + ab.StableRevision + "; restoring the Services and routes: " + m.routingProgress()
		return
	}
	msg := fmt.Sprintf("Rolled back %s at step %d/%d: every pod and all traffic on revision %s. To release it: %s",
		describeAbort(ab), ab.Step, len(m.steps()), ab.StableRevision, m.abortedAdvice(ab))
	if c := m.condition(rolloutsv1beta1.RolloutConditionProgressing); c == nil || c.Reason != rolloutsv1beta1.ProgressingReasonAborted {
		m.event(corev1.EventTypeNormal, "StableHeld", "Every pod and all traffic on revision %s; the release of %s stays aborted until the template changes or it is retried",
			ab.StableRevision, ab.Revision)
	}
	m.setProgressing(corev1.ConditionFalse, rolloutsv1beta1.ProgressingReasonAborted, msg)
	m.st.Message = msg
}

// clearCannotHold ends a Stalled condition an abort set.
func (m *machine) clearCannotHold() {
	if c := m.condition(rolloutsv1beta1.RolloutConditionStalled); c != nil && c.Reason == StalledReasonCannotHoldStable {
		m.setCondition(rolloutsv1beta1.RolloutConditionStalled, corev1.ConditionFalse, "StableHeld", "")
	}
}

// describeAbort names who aborted a release and how: "by ops via
// github-label".
func describeAbort(ab *rolloutsv1beta1.AbortStatus) string {
	return abort.Request{By: ab.By, Via: ab.Via}.Describe()
}

// abortTraffic is what the Services and routes carry while a release is
// aborted: every request to the stable pods (the stable Service narrowed to
// them while other pods exist and some run the stable revision), then,
// once every pod runs it, everything as before the release.
func abortTraffic(ro *rolloutsv1beta1.Rollout, st *rolloutsv1beta1.RolloutStatus, obs Observation) Traffic {
	ab := st.Aborted
	restored := Traffic{Stable: StableRestore, Routes: RoutesRestore, Canary: CanaryRemove}
	if ab == nil || ab.Held {
		return restored
	}
	t := Traffic{Stable: StableNarrow, StableRevision: ab.StableRevision, Routes: RoutesRestore, Canary: CanaryRemove}
	if t.StableRevision == "" {
		t.StableRevision = obs.Traffic.StableRevision
	}
	if w := obs.Workload; t.StableRevision == "" || inPlace(ro) && w != nil && w.UpdatedReplicas >= w.Replicas {
		// No pod runs the stable revision yet: a narrowed stable Service
		// would have no endpoints.
		t.Stable = StableRestore
	}
	return t
}
