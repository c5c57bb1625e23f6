package canary

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// maxPasses bounds how many state changes one call may chain, so that a
// step whose work is already done moves on in the same reconcile.
const maxPasses = 16

// Next computes the Rollout's next status and the actions that lead there.
// ro is not modified.
func Next(ro *rolloutsv1beta1.Rollout, obs Observation) (rolloutsv1beta1.RolloutStatus, Actions) {
	m := &machine{ro: ro, obs: obs, st: *ro.Status.DeepCopy()}
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
			before := m.st.DeepCopy()
			m.progress()
			if statusEqualIgnoringTimes(before, &m.st) {
				break
			}
		}
	}
	m.mirror()
	m.act.Events = dedupe(m.act.Events)
	return m.st, m.act
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
	st  rolloutsv1beta1.RolloutStatus
	act Actions
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
			"Stored but without effect in this version: "+strings.Join(m.obs.Ignored, "; "))
	default:
		m.setCondition(rolloutsv1beta1.RolloutConditionSupported, corev1.ConditionTrue, "Supported", "")
	}
}

// ownsWorkload reports whether the workload is held for this Rollout.
func (m *machine) ownsWorkload() bool {
	return m.obs.Workload != nil && m.obs.Workload.InProgressRollout == m.ro.Name
}

// terminate restores the workload of a Rollout being deleted.
func (m *machine) terminate() {
	m.st.Phase = rolloutsv1beta1.RolloutPhaseTerminating
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
		if m.st.CanaryStatus != nil && m.st.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted {
			m.st.CanaryStatus = nil
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
	m.st.CanaryStatus = nil
	m.clearProgressing("WorkloadNotFound")
}

// progress runs one transition of an enabled Rollout.
func (m *machine) progress() {
	switch m.st.Phase {
	case rolloutsv1beta1.RolloutPhaseProgressing:
		m.progressing()
	default:
		m.idle()
	}
}

// idle handles a Rollout with no release: it starts one when the webhook
// marked the workload for this Rollout.
func (m *machine) idle() {
	w := m.obs.Workload
	if len(m.obs.Blocking) == 0 && m.ownsWorkload() && !w.UpToDate && m.obs.Waiting != "" {
		// Held by the webhook, and kept held: starting without what the
		// Rollout names would release the revision without its traffic
		// steps.
		m.st.Message = fmt.Sprintf("Holding revision %s until the release can start: %s", w.UpdateRevision, m.obs.Waiting)
		return
	}
	if len(m.obs.Blocking) == 0 && m.ownsWorkload() && !w.UpToDate {
		m.st.Phase = rolloutsv1beta1.RolloutPhaseProgressing
		m.setProgressing(corev1.ConditionTrue, rolloutsv1beta1.ProgressingReasonInitializing, "Release of revision "+w.UpdateRevision+" detected")
		return
	}
	if m.ownsWorkload() && (w.UpToDate || len(m.obs.Blocking) > 0) {
		// Marked, but nothing to release (or nothing sluice can release):
		// hand it straight back.
		m.releaseWorkload(rolloutsv1beta1.ImmediateFinalizingPolicy)
	}
	if m.obs.BatchRelease != nil && m.st.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		m.act.BatchRelease = DeleteBatchRelease
	}
	if m.st.Phase != rolloutsv1beta1.RolloutPhaseHealthy {
		m.st.Message = "Rollout is healthy"
	}
	m.st.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	if len(m.obs.Blocking) > 0 {
		m.st.Message = "Rollout is not active: " + strings.Join(m.obs.Blocking, "; ")
	}
	cs := m.st.CanaryStatus
	stale := cs != nil && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted && cs.CanaryRevision != w.UpdateRevision
	if (cs == nil || stale) && w.UpToDate {
		// Like OpenKruise, describe an up-to-date workload as a completed
		// release, so "observedRolloutID matches and Completed" holds from
		// the first deploy on.
		steps := int32(len(m.steps())) //nolint:gosec // at most 50 steps
		m.st.CanaryStatus = &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{
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
			CanaryRevision:      w.UpdateRevision,
			CanaryReplicas:      w.UpdatedReplicas,
			CanaryReadyReplicas: w.UpdatedReadyReplicas,
		}
	}
}

// cancelStages are the finishing steps on traffic of a release that is
// disabled, deleted, or whose workload is gone.
func cancelStages() []rolloutsv1beta1.FinalisingStepType {
	pre, _ := sequence(finishCancel, false)
	return pre
}
