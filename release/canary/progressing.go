package canary

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
)

// progressing runs one transition of a Rollout in phase Progressing,
// according to the reason of its Progressing condition.
func (m *machine) progressing() {
	w := m.obs.Workload
	switch m.progressingReason() {
	case rolloutsv1beta1.ProgressingReasonInitializing:
		m.initialize()
	case rolloutsv1beta1.ProgressingReasonInRolling, rolloutsv1beta1.ProgressingReasonPaused:
		inRollback := m.backOnStable(m.canary().Common.StableRevision)
		if !inRollback {
			// An abort comes before anything else the release would do,
			// spec.strategy.paused included.
			if r := m.abortRequest(); r != nil {
				m.abort(*r)
				return
			}
			if r := m.analysisAbort(); r != nil {
				m.reportAnalysis(m.canary().Common.CurrentStepIndex)
				m.abort(*r)
				return
			}
		}
		m.refuseRetry()
		switch {
		case inRollback && rollbackInBatch(m.ro) && m.canary().Revision != w.UpdateRevision:
			// Roll back through the steps: release the stable revision like
			// a new one; pods already on it count as done.
			m.event(corev1.EventTypeWarning, "RollingBackInBatches", "Pod template reverted to stable revision %s: rolling back through the steps", m.canary().Common.StableRevision)
			m.holdForRollback()
			m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, "Rolling back in batches to revision "+w.UpdateRevision)
		case inRollback && !rollbackInBatch(m.ro):
			how := "rolling back at once"
			if why := rollbackAtOnceReason(m.ro); why != "" && m.ro.Annotations[rolloutsv1beta1.RollbackInBatchAnnotation] == "true" {
				how += " (" + rolloutsv1beta1.RollbackInBatchAnnotation + " ignored: " + why + ")"
			}
			m.event(corev1.EventTypeWarning, "RolledBack", "Pod template reverted to stable revision %s: %s", m.canary().Common.StableRevision, how)
			m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonCancelling, "Rolling back to the stable revision")
		case w.UpToDate:
			// Someone handed the workload back (unpaused it by hand, or
			// applied the restore patch) and Kubernetes finished the
			// rollout: there is nothing left to release.
			m.event(corev1.EventTypeNormal, "Completed", "The workload was fully released outside sluice")
			m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonFinalising, "Workload fully released outside sluice")
		case len(m.obs.Blocking) > 0:
			// Found mid-release: hold the workload at this step, untouched,
			// until the Rollout or the workload is fixed (or disabled).
			m.st.Message = fmt.Sprintf("Held at step %d/%d: %s", m.canary().Common.CurrentStepIndex, len(m.steps()), m.blocked())
		case m.ro.Spec.Strategy.Paused:
			m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonPaused, "Rollout is paused (spec.strategy.paused)")
			m.st.Message = fmt.Sprintf("Paused at step %d/%d (spec.strategy.paused)", m.canary().Common.CurrentStepIndex, len(m.steps()))
		case w.UpdateRevision != m.canary().Revision && m.ro.Spec.Strategy.BlueGreen != nil:
			// Both revisions run in full during a blue-green release; a
			// third one would need the old pods to make room.
			m.st.Message = fmt.Sprintf("New revision %s during the blue-green release of %s: set the template back to roll back first",
				w.UpdateRevision, m.canary().Revision)
		case w.UpdateRevision != m.canary().Revision:
			// The BatchRelease stays: deleting it would hand the workload
			// back and let Kubernetes release the new revision at once. It
			// re-plans by itself for the new revision and rollout ID.
			m.event(corev1.EventTypeNormal, "Restarted", "New revision %s while releasing %s: restarting at step 1",
				w.UpdateRevision, m.canary().Revision)
			m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, "Restarting for revision "+w.UpdateRevision)
		default:
			if m.progressingReason() == rolloutsv1beta1.ProgressingReasonPaused {
				m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInRolling, "Resumed")
			}
			m.replan()
			m.runStep()
		}
	case rolloutsv1beta1.ProgressingReasonFinalising:
		m.refuseAbort("the release of revision " + m.canary().Revision + " has done all its steps and is being handed back")
		m.finish(rolloutsv1beta1.WaitResumeFinalizingPolicy, true)
	case rolloutsv1beta1.ProgressingReasonCancelling:
		m.refuseAbort("the release is already rolling back")
		m.finish(rolloutsv1beta1.ImmediateFinalizingPolicy, false)
	default:
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, "")
	}
}

// initialize starts the release of the workload's update revision.
func (m *machine) initialize() {
	w := m.obs.Workload
	if br := m.obs.BatchRelease; br != nil && br.Deleting {
		return // a BatchRelease being deleted hands the workload back first
	}
	stable := w.StableRevision
	if old := m.rel; old != nil && old.Common.StableRevision != "" && old.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted {
		stable = old.Common.StableRevision // a restarted release keeps its stable revision
	} else if old != nil && old.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted && old.Revision != "" {
		stable = old.Revision
	}
	m.rel = &progress.Progress{
		Common: rolloutsv1beta1.CommonStatus{
			ObservedWorkloadGeneration: w.Generation,
			ObservedRolloutID:          rolloutIDOf(w),
			RolloutHash:                Hash(m.ro),
			StableRevision:             stable,
			PodTemplateHash:            w.PodTemplateHash,
			CurrentStepIndex:           1,
			NextStepIndex:              nextIndex(1, len(m.steps())),
			CurrentStepState:           rolloutsv1beta1.CanaryStepStateBeforeUpgrade,
			LastUpdateTime:             ptrTime(m.now()),
		},
		Revision: w.UpdateRevision,
	}
	m.removeCondition(RolloutConditionAnalysis)
	m.event(corev1.EventTypeNormal, "Progressing", "Releasing revision %s in %d steps", w.UpdateRevision, len(m.steps()))
	m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInRolling, "Release started")
	m.removeCondition(rolloutsv1beta1.RolloutConditionSucceeded)
}

// finish hands the workload back after success (WaitResume) or rollback
// (Immediate) and completes the release.
func (m *machine) finish(policy rolloutsv1beta1.FinalizingPolicyType, success bool) {
	cs := m.canary()
	kind := finishRollback
	if success && !rollingBack(cs) {
		// A rollback in batches finishes its traffic as a rollback: the
		// stable Service stays narrowed to the target revision until the
		// workload runs it alone.
		kind = finishSuccess
	}
	pre, post := sequence(kind, m.ro.Spec.Strategy.BlueGreen != nil)
	if !slices.Contains(post, cs.Common.FinalisingStep) || !m.routing() {
		if !m.finishTraffic(pre) {
			return
		}
		cs.Common.FinalisingStep = rolloutsv1beta1.FinalisingStepResumeWorkload
		if m.obs.BatchRelease != nil && m.obs.BatchRelease.Phase == rolloutsv1beta1.BatchReleasePhaseCompleted {
			cs.Common.FinalisingStep = rolloutsv1beta1.FinalisingStepReleaseWorkloadControl
		}
		if !m.releaseWorkload(policy) {
			m.st.Message = "Handing the workload back to its controller"
			return
		}
		if success && !m.obs.Workload.UpToDate {
			m.st.Message = "Waiting for the workload to finish its rollout"
			return
		}
		if !success && m.routing() && !m.obs.Workload.UpToDate {
			// The new revision's pods still run: the stable Service keeps
			// selecting only the stable ones until they are gone.
			m.st.Message = "Rolled back; waiting for the workload to run only the stable revision before restoring the stable Service"
			return
		}
	}
	if !m.finishTraffic(post) {
		return
	}
	cs.Common.FinalisingStep = rolloutsv1beta1.FinalisingStepEnd
	cs.Common.CurrentStepState = rolloutsv1beta1.CanaryStepStateCompleted
	cs.Common.NextStepIndex = -1
	cs.Common.LastUpdateTime = ptrTime(m.now())
	m.st.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	m.setProgressing(corev1.ConditionFalse, rolloutsv1beta1.ProgressingReasonCompleted, "Release finished")
	if success && rollingBack(cs) {
		cs.Common.CurrentStepIndex = int32(len(m.steps())) //nolint:gosec // at most 50 steps
		m.st.Message = "Rolled back in batches to revision " + cs.Common.StableRevision
		m.setCondition(rolloutsv1beta1.RolloutConditionSucceeded, corev1.ConditionFalse, "RolledBack", m.st.Message)
		m.event(corev1.EventTypeNormal, "RolledBack", "%s", m.st.Message)
		return
	}
	if success {
		cs.Common.CurrentStepIndex = int32(len(m.steps())) //nolint:gosec // at most 50 steps
		cs.Common.StableRevision = cs.Revision
		m.st.Message = "Rollout completed: revision " + cs.Revision + " released"
		m.setCondition(rolloutsv1beta1.RolloutConditionSucceeded, corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonCompleted, m.st.Message)
		m.event(corev1.EventTypeNormal, "Completed", "%s", m.st.Message)
		return
	}
	// The workload runs the stable revision again: describe that, keeping
	// the step the release stopped at.
	w := m.obs.Workload
	cs.Revision, cs.Common.PodTemplateHash, cs.Common.ObservedRolloutID = w.UpdateRevision, w.PodTemplateHash, rolloutIDOf(w)
	m.st.Message = "Rolled back to revision " + cs.Common.StableRevision
	if ab := m.st.Aborted; ab != nil {
		// The abort held it there; the template going back ended it.
		m.st.Message = fmt.Sprintf("Rolled back to revision %s: the release of %s was aborted %s at step %d, then the template was set back",
			cs.Common.StableRevision, ab.Revision, describeAbort(ab), ab.Step)
		m.st.Aborted = nil
	}
	m.setCondition(rolloutsv1beta1.RolloutConditionSucceeded, corev1.ConditionFalse, "RolledBack", m.st.Message)
	m.event(corev1.EventTypeNormal, "RolledBack", "%s", m.st.Message)
}

// replan moves the current step when the steps changed mid-release: to the
// first step that does not release fewer pods than are already released.
// A status another controller wrote (OpenKruise Rollouts, before sluice
// took over) carries that controller's hash of the same steps: when the
// release stands at the step it would be moved to anyway, it goes on there
// with its step state, so an approval given meanwhile (StepReady) counts.
func (m *machine) replan() {
	cs := m.canary()
	h := Hash(m.ro)
	if cs.Common.RolloutHash == h {
		return
	}
	adopted := !m.wroteStatus()
	cs.Common.RolloutHash = h
	steps := m.steps()
	released := m.obs.Workload.UpdatedReplicas
	idx := int32(len(steps)) //nolint:gosec // at most 50 steps
	for i := range steps {
		want, err := batch.DesiredUpdated(steps[i].Replicas, m.obs.Workload.Replicas)
		if err == nil && want >= released {
			idx = int32(i + 1) //nolint:gosec // at most 50 steps
			break
		}
	}
	if adopted && idx == cs.Common.CurrentStepIndex {
		return
	}
	m.event(corev1.EventTypeNormal, "Replanned", "Steps changed: continuing at step %d", idx)
	m.enterStep(idx)
}

// wroteStatus reports whether sluice wrote the Rollout's status before this
// reconcile: it always sets the Supported condition, which OpenKruise
// Rollouts does not know.
func (m *machine) wroteStatus() bool {
	for _, c := range m.ro.Status.Conditions {
		if c.Type == rolloutsv1beta1.RolloutConditionSupported {
			return true
		}
	}
	return false
}

// rollbackInBatch reports whether the Rollout asks for rollbacks to go
// through the steps (rollouts.kruise.io/rollback-in-batch: "true") and its
// strategy allows it. Unlike OpenKruise, an in-place Rollout that routes
// traffic rolls back in batches too: its requests go back to the rollback
// target's pods before any pod is replaced (see stepTraffic).
func rollbackInBatch(ro *rolloutsv1beta1.Rollout) bool {
	return ro.Annotations[rolloutsv1beta1.RollbackInBatchAnnotation] == "true" && rollbackAtOnceReason(ro) == ""
}

// rollbackAtOnceReason says why a Rollout's strategy rolls back at once
// whatever its rollback-in-batch annotation says; empty when it can roll
// back in batches.
func rollbackAtOnceReason(ro *rolloutsv1beta1.Rollout) string {
	switch s := ro.Spec.Strategy; {
	case s.BlueGreen != nil:
		return "a blue-green release keeps every old pod running, so there is nothing to roll back in steps"
	case s.Canary != nil && s.Canary.EnableExtraWorkloadForCanary && len(s.Canary.TrafficRoutings) > 0:
		// Without traffic routing the steps run again with nothing to
		// change (docs/workloads-canary-deployment.md); with it, as in
		// OpenKruise, the requests go back to the stable pods at once.
		return "a canary Deployment release that routes traffic never changed the stable pods, so rolling back only routes the requests back to them and removes the canary Deployment"
	}
	return ""
}

// holdForRollback deletes the BatchRelease of the abandoned release,
// leaving the workload held, when a Rollout that routes traffic starts to
// roll back in batches: until the requests are back on the rollback
// target's pods, nothing may replace a pod (the canary Service would lose
// its endpoints while it still receives requests). The first step of the
// rollback creates a new BatchRelease once they are.
func (m *machine) holdForRollback() {
	if br := m.obs.BatchRelease; m.routing() && br != nil && !br.Deleting {
		m.act.BatchRelease, m.act.SkipHandBack = DeleteBatchRelease, true
	}
}

// enterStep makes idx the current step, about to upgrade.
func (m *machine) enterStep(idx int32) {
	cs := m.canary()
	cs.Common.CurrentStepIndex = idx
	cs.Common.NextStepIndex = nextIndex(idx, len(m.steps()))
	cs.Common.CurrentStepState = rolloutsv1beta1.CanaryStepStateBeforeUpgrade
	cs.Common.LastUpdateTime = ptrTime(m.now())
	m.removeCondition(RolloutConditionAnalysis)
}

// canary is the progress of the release the machine drives, created
// empty when there is none.
// backOnStable reports whether the workload's pod template is back on
// stable, the stable revision of the release: the adapter says so
// (InRollback), or the template's revision is stable while the release is
// of another. The adapter reads the stable revision from a mark on the
// workload, which a read at the wrong moment can lack; without this, such a
// revert looked like a new revision, and the stable one was released again
// from step 1 as if it were new.
func (m *machine) backOnStable(stable string) bool {
	w := m.obs.Workload
	return w.InRollback || (stable != "" && w.UpdateRevision == stable && m.canary().Revision != stable)
}

func (m *machine) canary() *progress.Progress {
	if m.rel == nil {
		m.rel = &progress.Progress{}
	}
	return m.rel
}

func (m *machine) steps() []rolloutsv1beta1.CanaryStep {
	return m.ro.Spec.Strategy.Steps()
}

func nextIndex(idx int32, steps int) int32 {
	if int(idx) >= steps {
		return -1
	}
	return idx + 1
}

func rolloutIDOf(w *workload.Status) string {
	if w.RolloutID != "" {
		return w.RolloutID
	}
	return w.UpdateRevision
}

func ptrTime[T any](t T) *T { return &t }

// remaining is how long until d has passed since t, never negative.
func remaining(now, t time.Time, d time.Duration) time.Duration {
	return max(t.Add(d).Sub(now), 0)
}
