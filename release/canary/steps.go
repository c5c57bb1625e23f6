package canary

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/workload/batch"
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
	idx := min(max(cs.Common.CurrentStepIndex, 1), int32(len(steps))) //nolint:gosec // at most 50 steps
	cs.Common.CurrentStepIndex = idx
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
	switch cs.Common.CurrentStepState {
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
		if an := m.analysisAt(idx); an != nil && an.Hold {
			// Approved through the status before its analysis passed.
			m.reportAnalysis(idx)
			m.st.Message = fmt.Sprintf("%s approved; waiting for its analysis: %s", label, an.Message)
			return
		}
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
		cs.Common.NextStepIndex = -1
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
	next := cs.Common.NextStepIndex
	if next == 0 || next == want || cs.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted {
		return false
	}
	if next < 1 || int(next) > steps {
		m.event(corev1.EventTypeWarning, "InvalidStepJump", "nextStepIndex %d is not a step of 1..%d; ignored", next, steps)
		cs.Common.NextStepIndex = want
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
	if d <= 0 || cs.Common.LastUpdateTime == nil {
		return
	}
	if left := remaining(m.obs.Now, cs.Common.LastUpdateTime.Time, d); left > 0 {
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
	if m.obs.AbortOnProgressDeadline && !rollingBack(cs) {
		m.abort(abort.Request{Revision: cs.Revision, By: "sluice", Via: ViaProgressDeadline, Reason: msg})
	}
}

// clearStalled marks a stalled step as moving again.
func (m *machine) clearStalled() {
	if c := m.condition(rolloutsv1beta1.RolloutConditionStalled); c != nil && c.Status == corev1.ConditionTrue {
		m.setCondition(rolloutsv1beta1.RolloutConditionStalled, corev1.ConditionFalse, "ProgressMade", "The step's pods are ready")
	}
}

// pause waits in StepPaused for an approval or the step's pause duration.
// The last step of a canary release never pauses when it releases every
// pod; the last step of a blue-green release pauses as configured, as in
// OpenKruise: until it is approved, every old pod still runs, the instant
// way back.
func (m *machine) pause(idx int32, steps int, step rolloutsv1beta1.CanaryStep, desired int32, label string) {
	cs := m.canary()
	since := m.obs.Now
	if cs.Common.LastUpdateTime != nil {
		since = cs.Common.LastUpdateTime.Time
	}
	an := m.analysisAt(idx)
	m.reportAnalysis(idx)
	given := m.approvalFor(idx)
	if an != nil && an.Hold {
		// Neither the pause's end nor an approval lets the step go on
		// before its analysis passed.
		if m.prev == nil || m.prev.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
			m.event(corev1.EventTypeNormal, "StepPaused", "%s paused, waiting for its analysis", label)
		}
		m.st.Message = fmt.Sprintf("%s paused, waiting for its analysis: %s", label, an.Message)
		if given != nil {
			m.st.Message += fmt.Sprintf(" (approved by %s: it goes on once the analysis passed)", given.By)
		}
		return
	}
	needsApproval := an != nil && an.NeedsApproval
	switch {
	case int(idx) == steps && desired >= m.obs.Workload.Replicas && m.ro.Spec.Strategy.BlueGreen == nil && !needsApproval:
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	case step.Pause.Duration != nil:
		left := remaining(m.obs.Now, since, time.Duration(*step.Pause.Duration)*time.Second)
		if left > 0 {
			m.act.RequeueAfter = left
			m.st.Message = fmt.Sprintf("%s paused for %ds, %s left", label, *step.Pause.Duration, left.Round(time.Second))
			return
		}
		if needsApproval && given == nil {
			m.waitForApproval(idx, label, an)
			return
		}
		if needsApproval {
			m.approved(*given)
		}
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	case an != nil && an.ApprovalWaived:
		m.event(corev1.EventTypeNormal, "AnalysisPassed", "%s: %s; going on without an approval", label, an.Message)
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	case given != nil:
		m.approved(*given)
		m.setState(rolloutsv1beta1.CanaryStepStateReady)
	default:
		m.waitForApproval(idx, label, an)
	}
}

// waitForApproval says that step idx waits for an approval (and what its
// analysis says, an, when it has one).
func (m *machine) waitForApproval(idx int32, label string, an *stepgate.Decision) {
	cs := m.canary()
	if m.prev == nil || m.prev.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		m.event(corev1.EventTypeNormal, "StepPaused", "%s paused, waiting for approval", label)
	}
	analysed := ""
	if an != nil {
		analysed = " (" + an.Message + ")"
	}
	m.st.Message = fmt.Sprintf("%s paused, waiting for approval%s: kubectl annotate rollout %s -n %s --overwrite sluice.dev/approve=step=%d,revision=%s",
		label, analysed, m.ro.Name, m.ro.Namespace, idx, cs.Revision)
}

// beforeRetry reports whether at is not after the retry of the revision
// being released, if it was retried: an approval given before the retry
// (refused while the release was aborted) approves nothing of the retried
// release.
func (m *machine) beforeRetry(at *time.Time) bool {
	r := m.obs.Retry
	if r == nil || r.At == nil || r.Revision != m.canary().Revision {
		return false
	}
	return at == nil || !at.After(*r.At)
}

// recordStatusApproval records an approval given by patching
// currentStepState to StepReady (kubectl-kruise rollout approve). sluice
// itself never stores StepReady, so a stored StepReady came from a user.
func (m *machine) recordStatusApproval(idx int32) {
	prev := m.prev
	if prev == nil || prev.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateReady || prev.Common.CurrentStepIndex != idx {
		return
	}
	by := m.obs.StatusApprover
	if by == "" {
		by = "unknown"
	}
	m.approved(approval.Approval{Revision: m.canary().Revision, Step: idx, By: by, Via: "status"})
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
		cs.Common.PodTemplateHash = w.PodTemplateHash
	}
	cs.Updated = w.UpdatedReplicas
	cs.UpdatedReady = w.UpdatedReadyReplicas
	if cs.Common.StableRevision == "" {
		if br := m.obs.BatchRelease; br != nil && br.StableRevision != "" {
			cs.Common.StableRevision = br.StableRevision
		} else {
			cs.Common.StableRevision = w.StableRevision
		}
		if cs.Common.StableRevision == "" && m.obs.Traffic != nil {
			// The stable Service is narrowed before the workload records
			// its stable revision: take the one its pods run.
			cs.Common.StableRevision = m.obs.Traffic.StableRevision
		}
	}
}

// ensurePartition asks for the BatchRelease to release up to batch p, for
// the release the status observes: a new revision at the same step still
// updates the plan's rollout ID, which the BatchRelease waits for.
func (m *machine) ensurePartition(p int32) {
	br := m.obs.BatchRelease
	if br != nil && br.Partition != nil && *br.Partition == p && !br.Deleting && br.RolloutID == m.canary().Common.ObservedRolloutID && !br.HoldStable {
		return
	}
	m.act.BatchRelease = EnsureBatchRelease
	m.act.Partition = &p
	m.act.Policy = rolloutsv1beta1.ImmediateFinalizingPolicy
}

// batchReady reports whether the BatchRelease has released batch p and its
// pods are ready (not while it holds, or has just held, the stable
// revision: its batch status is from before the hold).
func (m *machine) batchReady(p int32) bool {
	br := m.obs.BatchRelease
	return br.caughtUp() && br.Partition != nil && *br.Partition == p && !br.HoldStable && br.StableHold == "" &&
		(br.UpdateRevision == "" || br.UpdateRevision == m.canary().Revision) &&
		br.Phase == rolloutsv1beta1.RolloutPhaseProgressing &&
		br.CurrentBatch >= p && br.BatchState == rolloutsv1beta1.ReadyBatchState
}

// setState changes the current step state and stamps the time.
func (m *machine) setState(s rolloutsv1beta1.CanaryStepState) {
	cs := m.canary()
	if cs.Common.CurrentStepState == s {
		return
	}
	cs.Common.CurrentStepState = s
	cs.Common.LastUpdateTime = ptrTime(m.now())
}
