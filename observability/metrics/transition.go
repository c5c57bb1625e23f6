package metrics

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/release/progress"
)

// view is the part of a Rollout's status the observer compares.
type view struct {
	phase       rolloutsv1beta1.RolloutPhase
	step        int32
	state       rolloutsv1beta1.CanaryStepState
	revision    string
	stable      string
	progressing string
	stalled     bool
}

// viewOf reads ro's release (release/progress) and the conditions the
// observer compares.
func viewOf(ro *rolloutsv1beta1.Rollout) view {
	st := &ro.Status
	v := view{phase: st.Phase}
	if p, ok := progress.Of(ro); ok {
		v.revision = p.Revision
		v.step, v.state, v.stable = p.Common.CurrentStepIndex, p.Common.CurrentStepState, p.Common.StableRevision
	}
	for _, c := range st.Conditions {
		switch c.Type {
		case rolloutsv1beta1.RolloutConditionProgressing:
			v.progressing = c.Reason
		case rolloutsv1beta1.RolloutConditionStalled:
			v.stalled = c.Status == corev1.ConditionTrue
		}
	}
	return v
}

// releasing reports whether v is in a step of a release.
func (v view) releasing() bool {
	return v.phase == rolloutsv1beta1.RolloutPhaseProgressing && v.revision != "" && v.step >= 1 &&
		v.state != rolloutsv1beta1.CanaryStepStateCompleted
}

// stepKey names one step of one revision.
type stepKey struct {
	revision string
	step     int32
}

// current is the step v is in, if it is releasing.
func (v view) current() (stepKey, bool) {
	return stepKey{revision: v.revision, step: v.step}, v.releasing()
}

// released is how many of the steps' batches v has released: the current
// step's once it is past upgrading.
func (v view) released() int32 {
	switch v.state {
	case "", rolloutsv1beta1.CanaryStepStateInit, rolloutsv1beta1.CanaryStepStateBeforeUpgrade, rolloutsv1beta1.CanaryStepStateUpgrade:
		return max(v.step-1, 0)
	}
	return v.step
}

// batchesReleased is how many batches were released between old and new.
func batchesReleased(old, cur view) int32 {
	switch {
	case cur.revision != old.revision && cur.phase == rolloutsv1beta1.RolloutPhaseProgressing:
		return cur.released() // a new release (or a restart) began
	case cur.revision == old.revision && old.phase == rolloutsv1beta1.RolloutPhaseProgressing:
		return max(cur.released()-old.released(), 0) // a jump back releases nothing
	}
	return 0
}

// The kinds of rollback.
const (
	rollbackImmediate = "immediate"
	rollbackInBatch   = "in-batch"
	rollbackAbort     = "abort"
)

// rollbackStarted names the kind of rollback that began between old and
// new, or is empty.
func rollbackStarted(old, cur view) string {
	switch {
	case cur.phase == rolloutsv1beta1.RolloutPhaseAborted && old.phase != rolloutsv1beta1.RolloutPhaseAborted:
		return rollbackAbort
	case cur.progressing == rolloutsv1beta1.ProgressingReasonCancelling && old.progressing != rolloutsv1beta1.ProgressingReasonCancelling &&
		old.phase != rolloutsv1beta1.RolloutPhaseAborted:
		// (The revert completing an abort is the same rollback.)
		return rollbackImmediate
	case old.releasing() && cur.phase == rolloutsv1beta1.RolloutPhaseProgressing &&
		cur.revision != old.revision && cur.revision != "" && cur.revision == cur.stable:
		// The release restarted for the stable revision: the pod template
		// went back, and the steps release it again.
		return rollbackInBatch
	}
	return ""
}

// approvalSource maps an approval's Via to the source label; unknown values
// (Via can come from a user's JSON) become "other".
func approvalSource(via string) string {
	switch via {
	case "status", "status-patch":
		return "status-patch"
	case "annotation", "":
		return "annotation"
	case "label", "github-label":
		return "github-label"
	case "gitea-label", "gitlab-label", "github-check-run":
		return via
	case "commit", "trailer", "git-trailer":
		return "git-trailer"
	case "plugin":
		return "plugin"
	}
	return "other"
}

// transitionEvents are the events for the transitions between old and new
// that the step machine does not event itself (evented holds the reasons
// it did).
func transitionEvents(old, cur view, steps int, evented []string) []canary.Event {
	var out []canary.Event
	// Every transition evented here is Normal: the warnings (stalled,
	// rolled back) come from the step machine.
	add := func(reason, format string, args ...any) {
		if !slices.Contains(evented, reason) {
			out = append(out, canary.Event{Type: corev1.EventTypeNormal, Reason: reason, Message: fmt.Sprintf(format, args...)})
		}
	}
	if cur.releasing() && old.revision == cur.revision && old.step != cur.step && old.step != 0 &&
		!slices.Contains(evented, "StepJumped") && !slices.Contains(evented, "Replanned") {
		add("StepStarted", "Step %d/%d of revision %s started", cur.step, steps, cur.revision)
	}
	if cur.phase == rolloutsv1beta1.RolloutPhaseTerminating && old.phase != rolloutsv1beta1.RolloutPhaseTerminating {
		add("Terminating", "Rollout deleted: finishing with the workload before letting go")
	}
	if old.stalled && !cur.stalled {
		add("ProgressMade", "The step's pods are ready: no longer stalled")
	}
	if cur.progressing == rolloutsv1beta1.ProgressingReasonPaused && old.progressing != rolloutsv1beta1.ProgressingReasonPaused {
		add("Paused", "Release paused at step %d/%d (spec.strategy.paused)", cur.step, steps)
	}
	if old.progressing == rolloutsv1beta1.ProgressingReasonPaused && cur.progressing == rolloutsv1beta1.ProgressingReasonInRolling {
		add("Resumed", "Release resumed at step %d/%d", cur.step, steps)
	}
	return out
}
