package canary

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/batch"
)

// runStep moves the current step through its states: BeforeStepUpgrade,
// StepUpgrade, StepTrafficRouting, StepMetricsAnalysis, StepPaused,
// StepReady, then the next step or Completed.
func (m *machine) runStep() {
	cs := m.canary()
	steps := m.steps()
	w := m.obs.Workload
	if len(steps) == 0 {
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonFinalising, "No steps: releasing everything")
		return
	}
	idx := min(max(cs.CurrentStepIndex, 1), int32(len(steps))) //nolint:gosec // at most 50 steps
	cs.CurrentStepIndex = idx
	if m.jump(idx, len(steps)) {
		return
	}
	step := steps[idx-1]
	m.observeWorkload()
	desired, err := batch.DesiredUpdated(step.Replicas, w.Replicas)
	if err != nil {
		m.st.Message = fmt.Sprintf("spec.strategy.canary.steps[%d].replicas: %v", idx-1, err)
		return
	}
	label := fmt.Sprintf("Step %d/%d", idx, len(steps))
	switch cs.CurrentStepState {
	case rolloutsv1beta1.CanaryStepStateUpgrade:
		m.ensurePartition(idx - 1)
		if !m.batchReady(idx - 1) {
			m.st.Message = fmt.Sprintf("%s: upgrading, %d/%d pods on the new revision, %d ready", label, w.UpdatedReplicas, desired, w.UpdatedReadyReplicas)
			m.checkDeadline(label, desired)
			return
		}
		m.clearStalled()
		m.setState(rolloutsv1beta1.CanaryStepStateTrafficRouting)
	case rolloutsv1beta1.CanaryStepStateTrafficRouting:
		m.ensurePartition(idx - 1)
		if !m.routed() {
			m.st.Message = fmt.Sprintf("%s: routing traffic: %s", label, m.routingProgress())
			return
		}
		m.setState(rolloutsv1beta1.CanaryStepStateMetricsAnalysis)
	case rolloutsv1beta1.CanaryStepStateMetricsAnalysis:
		m.ensurePartition(idx - 1)
		m.setState(rolloutsv1beta1.CanaryStepStatePaused)
	case rolloutsv1beta1.CanaryStepStatePaused:
		m.ensurePartition(idx - 1)
		m.pause(idx, len(steps), step, desired, label)
	case rolloutsv1beta1.CanaryStepStateReady:
		m.ensurePartition(idx - 1)
		if !m.batchReady(idx - 1) {
			// Approved (by a raw status patch) before the batch was done.
			m.st.Message = fmt.Sprintf("%s approved; waiting for its pods: %d/%d on the new revision, %d ready", label, w.UpdatedReplicas, desired, w.UpdatedReadyReplicas)
			return
		}
		m.recordStatusApproval(idx)
		if int(idx) < len(steps) {
			m.enterStep(idx + 1)
			return
		}
		m.setState(rolloutsv1beta1.CanaryStepStateCompleted)
		cs.NextStepIndex = -1
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonFinalising, "All steps done")
		m.st.Message = "All steps done: finishing the release"
	case rolloutsv1beta1.CanaryStepStateCompleted:
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonFinalising, "All steps done")
	default: // BeforeStepUpgrade, StepInit, or unset
		if br := m.obs.BatchRelease; m.act.BatchRelease == DeleteBatchRelease || (br != nil && br.Deleting) {
			// The BatchRelease of an earlier release is going: a new one
			// is created for this release once it has.
			m.st.Message = label + ": waiting for the BatchRelease of the earlier release to be deleted"
			m.routed() // the routing may change meanwhile
			return
		}
		if !m.routed() {
			m.st.Message = fmt.Sprintf("%s: preparing traffic before upgrading: %s", label, m.routingProgress())
			return
		}
		m.setState(rolloutsv1beta1.CanaryStepStateUpgrade)
		m.st.Message = label + ": upgrading"
	}
}

// jump handles a user's write of status.canaryStatus.nextStepIndex (what
// OpenKruise calls a step jump): any value but the step after idx moves the
// release to that step, forward or back. Going back never scales pods down:
// the BatchRelease keeps what it released and only the step changes. An
// out-of-range value is corrected.
func (m *machine) jump(idx int32, steps int) bool {
	cs := m.canary()
	want := nextIndex(idx, steps)
	next := cs.NextStepIndex
	if next == 0 || next == want || cs.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted {
		return false
	}
	if next < 1 || int(next) > steps {
		m.event(corev1.EventTypeWarning, "InvalidStepJump", "nextStepIndex %d is not a step of 1..%d; ignored", next, steps)
		cs.NextStepIndex = want
		return false
	}
	m.event(corev1.EventTypeNormal, "StepJumped", "Jumping from step %d to step %d (nextStepIndex)", idx, next)
	m.enterStep(next)
	return true
}

// checkDeadline reports a step whose pods are not ready within the progress
// deadline as Stalled, naming them; before the deadline it asks to be
// looked at again when it passes.
func (m *machine) checkDeadline(label string, desired int32) {
	d := m.obs.ProgressDeadline
	cs := m.canary()
	if d <= 0 || cs.LastUpdateTime == nil {
		return
	}
	if left := remaining(m.obs.Now, cs.LastUpdateTime.Time, d); left > 0 {
		m.act.RequeueAfter = left
		return
	}
	w := m.obs.Workload
	msg := fmt.Sprintf("%s: %d/%d new pods ready after %s", label, w.UpdatedReadyReplicas, desired, d)
	if len(m.obs.UnreadyPods) > 0 {
		msg += "; not ready: " + strings.Join(m.obs.UnreadyPods, ", ")
	}
	if c := m.condition(rolloutsv1beta1.RolloutConditionStalled); c == nil || c.Status != corev1.ConditionTrue {
		m.event(corev1.EventTypeWarning, "ProgressDeadlineExceeded", "%s", msg)
	}
	m.setCondition(rolloutsv1beta1.RolloutConditionStalled, corev1.ConditionTrue, "ProgressDeadlineExceeded", msg)
	m.st.Message = msg
}

// clearStalled marks a stalled step as moving again.
func (m *machine) clearStalled() {
	if c := m.condition(rolloutsv1beta1.RolloutConditionStalled); c != nil && c.Status == corev1.ConditionTrue {
		m.setCondition(rolloutsv1beta1.RolloutConditionStalled, corev1.ConditionFalse, "ProgressMade", "The step's pods are ready")
	}
}

// pause waits in StepPaused for an approval or the step's pause duration.
// The last step never pauses when it releases every pod.
func (m *machine) pause(idx int32, steps int, step rolloutsv1beta1.CanaryStep, desired int32, label string) {
	cs := m.canary()
	since := m.obs.Now
	if cs.LastUpdateTime != nil {
		since = cs.LastUpdateTime.Time
	}
	switch {
	case int(idx) == steps && desired >= m.obs.Workload.Replicas:
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	case step.Pause.Duration != nil:
		left := remaining(m.obs.Now, since, time.Duration(*step.Pause.Duration)*time.Second)
		if left > 0 {
			m.act.RequeueAfter = left
			m.st.Message = fmt.Sprintf("%s paused for %ds, %s left", label, *step.Pause.Duration, left.Round(time.Second))
			return
		}
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	case m.obs.Approval != nil && m.obs.Approval.Covers(cs.CanaryRevision, idx):
		a := *m.obs.Approval
		a.Step = idx
		if a.Via == "" {
			a.Via = "annotation"
		}
		m.approved(a)
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	default:
		if m.ro.Status.CanaryStatus == nil || m.ro.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
			m.event(corev1.EventTypeNormal, "StepPaused", "%s paused, waiting for approval", label)
		}
		m.st.Message = fmt.Sprintf("%s paused, waiting for approval: kubectl annotate rollout %s -n %s --overwrite sluice.dev/approve=step=%d,revision=%s",
			label, m.ro.Name, m.ro.Namespace, idx, cs.CanaryRevision)
	}
}

// recordStatusApproval records an approval given by patching
// currentStepState to StepReady (kubectl-kruise rollout approve). sluice
// itself never stores StepReady, so a stored StepReady came from a user.
func (m *machine) recordStatusApproval(idx int32) {
	prev := m.ro.Status.CanaryStatus
	if prev == nil || prev.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady || prev.CurrentStepIndex != idx {
		return
	}
	by := m.obs.StatusApprover
	if by == "" {
		by = "unknown"
	}
	m.approved(approval.Approval{Revision: m.canary().CanaryRevision, Step: idx, By: by, Via: "status"})
}

func (m *machine) approved(a approval.Approval) {
	at := m.obs.Now
	a.At = &at
	m.act.Approved = &a
	m.event(corev1.EventTypeNormal, "Approved", "Step %d of revision %s approved by %s via %s", a.Step, a.Revision, a.By, a.Via)
}

// observeWorkload copies the workload's counts into the canary status.
func (m *machine) observeWorkload() {
	cs, w := m.canary(), m.obs.Workload
	if w.PodTemplateHash != "" {
		cs.PodTemplateHash = w.PodTemplateHash
	}
	cs.CanaryReplicas = w.UpdatedReplicas
	cs.CanaryReadyReplicas = w.UpdatedReadyReplicas
	if cs.StableRevision == "" {
		if br := m.obs.BatchRelease; br != nil && br.StableRevision != "" {
			cs.StableRevision = br.StableRevision
		} else {
			cs.StableRevision = w.StableRevision
		}
		if cs.StableRevision == "" && m.obs.Traffic != nil {
			// The stable Service is narrowed before the workload records
			// its stable revision: take the one its pods run.
			cs.StableRevision = m.obs.Traffic.StableRevision
		}
	}
}

// ensurePartition asks for the BatchRelease to release up to batch p, for
// the release the status observes: a new revision at the same step still
// updates the plan's rollout ID, which the BatchRelease waits for.
func (m *machine) ensurePartition(p int32) {
	br := m.obs.BatchRelease
	if br != nil && br.Partition != nil && *br.Partition == p && !br.Deleting && br.RolloutID == m.canary().ObservedRolloutID {
		return
	}
	m.act.BatchRelease = EnsureBatchRelease
	m.act.Partition = &p
	m.act.Policy = rolloutsv1beta1.ImmediateFinalizingPolicy
}

// batchReady reports whether the BatchRelease has released batch p and its
// pods are ready.
func (m *machine) batchReady(p int32) bool {
	br := m.obs.BatchRelease
	return br.caughtUp() && br.Partition != nil && *br.Partition == p &&
		(br.UpdateRevision == "" || br.UpdateRevision == m.canary().CanaryRevision) &&
		br.Phase == rolloutsv1beta1.RolloutPhaseProgressing &&
		br.CurrentBatch >= p && br.BatchState == rolloutsv1beta1.ReadyBatchState
}

// setState changes the current step state and stamps the time.
func (m *machine) setState(s rolloutsv1beta1.CanaryStepState) {
	cs := m.canary()
	if cs.CurrentStepState == s {
		return
	}
	cs.CurrentStepState = s
	cs.LastUpdateTime = ptrTime(m.now())
}
