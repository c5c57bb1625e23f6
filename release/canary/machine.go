package canary

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
)

// maxPasses bounds how many state changes one call may chain, so that a
// step whose work is already done moves on in the same reconcile.
const maxPasses = 16

// Next computes the Rollout's next status and the actions that lead there.
// It takes the release from ro's status through release/progress, whichever
// status field holds it, and returns it where ro's strategy keeps it
// (progress.Put). ro is not modified.
func Next(ro *rolloutsv1beta1.Rollout, obs Observation) (rolloutsv1beta1.RolloutStatus, Actions) {
	m := &machine{ro: ro, obs: obs, st: *ro.Status.DeepCopy()}
	if p, ok := progress.Of(ro); ok {
		prev := p
		m.prev, m.rel = &prev, &p
		m.rel.Common = *p.Common.DeepCopy()
	}
	m.st.CanaryStatus, m.st.BlueGreenStatus = nil, nil
	m.st.ObservedGeneration = ro.Generation
	m.supported()
	switch {
	case obs.Deleting:
		m.terminate()
	case ro.Spec.Disabled:
		m.disable("Rollout is disabled")
	case obs.Workload != nil && obs.Workload.Disabled != "":
		m.disable(obs.Workload.Disabled)
	case obs.Workload == nil:
		m.workloadGone()
	default:
		for range maxPasses {
			before := m.status()
			m.progress()
			if after := m.status(); statusEqualIgnoringTimes(&before, &after) {
				break
			}
		}
	}
	m.mirror()
	m.act.Events = dedupe(m.act.Events)
	return m.status(), m.act
}

// dedupe drops repeated events, which chained passes may produce.
func dedupe(events []Event) []Event {
	seen := map[Event]bool{}
	out := events[:0]
	for _, e := range events {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// machine carries one call of Next.
type machine struct {
	ro  *rolloutsv1beta1.Rollout
	obs Observation
	// st is the status but for the release, which rel holds (nil: none);
	// prev is the release as ro's status holds it.
	st        rolloutsv1beta1.RolloutStatus
	rel, prev *progress.Progress
	act       Actions
}

// status is the Rollout's status with the release written back into it.
func (m *machine) status() rolloutsv1beta1.RolloutStatus {
	st := *m.st.DeepCopy()
	progress.Put(m.ro, &st, m.rel)
	return st
}

func (m *machine) now() metav1.Time { return metav1.NewTime(m.obs.Now) }

func (m *machine) event(typ, reason, format string, args ...any) {
	m.act.Events = append(m.act.Events, Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// supported sets the Supported condition from the observation.
func (m *machine) supported() {
	switch {
	case len(m.obs.Blocking) > 0:
		m.setCondition(rolloutsv1beta1.RolloutConditionSupported, corev1.ConditionFalse, "Unsupported",
			"Not released by sluice: "+strings.Join(m.obs.Blocking, "; "))
	case len(m.obs.Ignored) > 0:
		m.setCondition(rolloutsv1beta1.RolloutConditionSupported, corev1.ConditionFalse, "PartlySupported",
			"Stored but without effect: "+strings.Join(m.obs.Ignored, "; "))
	default:
		m.setCondition(rolloutsv1beta1.RolloutConditionSupported, corev1.ConditionTrue, "Supported", "")
	}
}

// blocked says why a release cannot start or go on (what the Rollout asks
// for that sluice cannot do, or what it waits for); empty when nothing
// holds it.
func (m *machine) blocked() string {
	if len(m.obs.Blocking) > 0 {
		return strings.Join(m.obs.Blocking, "; ")
	}
	return m.obs.Waiting
}

// ownsWorkload reports whether the workload is held for this Rollout.
func (m *machine) ownsWorkload() bool {
	return m.obs.Workload != nil && m.obs.Workload.InProgressRollout == m.ro.Name
}

// terminate restores the workload of a Rollout being deleted.
func (m *machine) terminate() {
	m.st.Phase = rolloutsv1beta1.RolloutPhaseTerminating
	m.st.Aborted = nil
	m.setCondition(rolloutsv1beta1.RolloutConditionTerminating, corev1.ConditionTrue, rolloutsv1beta1.TerminatingReasonInTerminating, "Restoring the workload")
	if m.engaged() && !m.finishTraffic(cancelStages()) {
		return
	}
	if m.obs.KeepHeldOnDeletion {
		if br := m.obs.BatchRelease; br != nil {
			if !br.Deleting {
				m.act.BatchRelease, m.act.SkipHandBack = DeleteBatchRelease, true
			}
			return
		}
		m.setCondition(rolloutsv1beta1.RolloutConditionTerminating, corev1.ConditionFalse, rolloutsv1beta1.TerminatingReasonCompleted, "Workload left held, as asked")
		m.act.RemoveFinalizer = true
		return
	}
	if m.releaseWorkload(rolloutsv1beta1.ImmediateFinalizingPolicy) {
		m.setCondition(rolloutsv1beta1.RolloutConditionTerminating, corev1.ConditionFalse, rolloutsv1beta1.TerminatingReasonCompleted, "Workload restored")
		m.act.RemoveFinalizer = true
	}
}

// disable finishes any release and leaves the Rollout Disabled.
func (m *machine) disable(why string) {
	if m.engaged() && !m.finishTraffic(cancelStages()) {
		m.st.Phase = rolloutsv1beta1.RolloutPhaseDisabling
		return
	}
	if m.releaseWorkload(rolloutsv1beta1.ImmediateFinalizingPolicy) {
		if m.st.Phase != rolloutsv1beta1.RolloutPhaseDisabled {
			m.event(corev1.EventTypeNormal, "Disabled", "%s; the workload is released by its own controller", why)
		}
		m.st.Phase = rolloutsv1beta1.RolloutPhaseDisabled
		m.st.Message = why
		m.st.Aborted = nil
		if m.rel != nil && m.rel.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted {
			m.rel = nil
		}
		m.clearProgressing("Disabled")
		return
	}
	m.st.Phase = rolloutsv1beta1.RolloutPhaseDisabling
	m.st.Message = "Rollout is disabled; handing the workload back"
}

// releaseWorkload drives the hand-back of the workload through the
// BatchRelease (or directly when there is none) and reports when it is done.
func (m *machine) releaseWorkload(policy rolloutsv1beta1.FinalizingPolicyType) bool {
	br := m.obs.BatchRelease
	switch {
	case br != nil && br.Deleting:
		return false
	case br != nil && (br.Partition != nil || br.Policy != policy || !br.caughtUp() ||
		br.Phase != rolloutsv1beta1.BatchReleasePhaseCompleted):
		if br.Partition != nil || br.Policy != policy {
			m.act.BatchRelease, m.act.Partition, m.act.Policy = EnsureBatchRelease, nil, policy
		}
		return false
	case br != nil:
		m.act.BatchRelease = DeleteBatchRelease
		return false
	case m.ownsWorkload():
		m.act.HandBack = true
		return false
	}
	return true
}

// workloadGone resets a Rollout whose workload does not exist.
func (m *machine) workloadGone() {
	if m.engaged() && !m.finishTraffic(cancelStages()) {
		m.st.Message = "Workload Not Found; restoring traffic: " + m.routingProgress()
		return
	}
	if m.obs.BatchRelease != nil {
		m.act.BatchRelease = DeleteBatchRelease
	}
	m.st.Phase = rolloutsv1beta1.RolloutPhaseInitial
	m.st.Message = "Workload Not Found"
	m.rel = nil
	m.st.Aborted = nil
	m.clearProgressing("WorkloadNotFound")
}

// progress runs one transition of an enabled Rollout.
func (m *machine) progress() {
	switch m.st.Phase {
	case rolloutsv1beta1.RolloutPhaseProgressing:
		m.progressing()
	case rolloutsv1beta1.RolloutPhaseAborted:
		m.aborted()
	default:
		m.idle()
	}
}

// idle handles a Rollout with no release: it starts one when the webhook
// marked the workload for this Rollout.
func (m *machine) idle() {
	w := m.obs.Workload
	if why := m.blocked(); why != "" && m.ownsWorkload() && !w.UpToDate {
		// Held by the webhook, and kept held: releasing without what the
		// Rollout asks for (its traffic steps, its batches) would be a
		// silent downgrade.
		m.st.Message = fmt.Sprintf("Holding revision %s until the release can start: %s", w.UpdateRevision, why)
		return
	}
	if m.ownsWorkload() && !w.UpToDate {
		m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, "Release of revision "+w.UpdateRevision+" detected")
		return
	}
	if m.ownsWorkload() && w.UpToDate {
		// Marked, but nothing to release: hand it straight back.
		m.releaseWorkload(rolloutsv1beta1.ImmediateFinalizingPolicy)
	}
	if m.obs.BatchRelease != nil && m.st.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		m.act.BatchRelease = DeleteBatchRelease
	}
	m.refuseAbort("no release is in progress")
	m.refuseRetry()
	if m.st.Phase != rolloutsv1beta1.RolloutPhaseHealthy {
		m.st.Message = "Rollout is healthy"
	}
	m.st.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	if len(m.obs.Blocking) > 0 {
		m.st.Message = "Rollout is not active: " + strings.Join(m.obs.Blocking, "; ")
	}
	cs := m.rel
	stale := cs != nil && cs.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted && cs.Revision != w.UpdateRevision
	if (cs == nil || stale) && w.UpToDate {
		// Like OpenKruise, describe an up-to-date workload as a completed
		// release, so "observedRolloutID matches and Completed" holds from
		// the first deploy on.
		steps := int32(len(m.steps())) //nolint:gosec // at most 50 steps
		m.rel = &progress.Progress{
			Common: rolloutsv1beta1.CommonStatus{
				ObservedWorkloadGeneration: w.Generation,
				ObservedRolloutID:          rolloutIDOf(w),
				RolloutHash:                Hash(m.ro),
				StableRevision:             w.UpdateRevision,
				PodTemplateHash:            w.PodTemplateHash,
				CurrentStepIndex:           steps,
				NextStepIndex:              -1,
				CurrentStepState:           rolloutsv1beta1.CanaryStepStateCompleted,
				LastUpdateTime:             ptrTime(m.now()),
			},
			Revision:     w.UpdateRevision,
			Updated:      w.UpdatedReplicas,
			UpdatedReady: w.UpdatedReadyReplicas,
		}
	}
}

// cancelStages are the finishing steps on traffic of a release that is
// disabled, deleted, or whose workload is gone.
func cancelStages() []rolloutsv1beta1.FinalisingStepType {
	pre, _ := sequence(finishCancel, false)
	return pre
}
