// Package approve decides what the plugin's approve and promote-full
// commands write: a sluice.dev/approve value pinned to the revision being
// released (docs/approvals.md), given only when the Rollout is in a state
// where it means something. Its errors name the Rollout, its state and what
// to do instead.
package approve

import (
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
)

// Plan is an approval to write on a Rollout.
type Plan struct {
	// From is the step the release is at when the approval is written.
	From int32
	// Step is the last step approved.
	Step int32
	// Steps is the number of steps of the Rollout.
	Steps int32
	// Revision is the revision approved: the one being released.
	Revision string
}

// Value is the sluice.dev/approve annotation value of p.
func (p Plan) Value() string {
	return fmt.Sprintf("step=%d,revision=%s", p.Step, p.Revision)
}

// Step plans the approval of the paused current step of ro's release, or of
// every step from it up to upTo when upTo is not 0.
func Step(ro *rolloutsv1beta1.Rollout, upTo int32) (Plan, error) {
	plan, p, err := start(ro)
	if err != nil {
		return Plan{}, err
	}
	idx, state := p.Common.CurrentStepIndex, p.Common.CurrentStepState
	if state != rolloutsv1beta1.CanaryStepStatePaused {
		return Plan{}, fmt.Errorf("rollout %s is at step %d in state %s, not paused: nothing to approve yet; watch it with %s",
			progress.Ref(ro), idx, state, progress.Command(ro, "status", "--watch"))
	}
	if idx < 1 || idx > plan.Steps {
		return Plan{}, fmt.Errorf("rollout %s is at step %d, which is not one of its %d steps: wait for sluice to correct it (%s)",
			progress.Ref(ro), idx, plan.Steps, progress.Command(ro, "status"))
	}
	if d := ro.Spec.Strategy.Steps()[idx-1].Pause.Duration; d != nil {
		return Plan{}, fmt.Errorf("step %d of rollout %s pauses for %ds and then goes on by itself; an approval does not shorten it: wait, watching it with %s",
			idx, progress.Ref(ro), *d, progress.Command(ro, "status", "--watch"))
	}
	switch {
	case upTo == 0:
		plan.Step = idx
	case upTo < 0:
		return Plan{}, fmt.Errorf("--step %d is not a step: steps count from 1", upTo)
	case upTo < idx:
		return Plan{}, fmt.Errorf("step %d of rollout %s is already done (the release is at step %d): give --step %d or more",
			upTo, progress.Ref(ro), idx, idx)
	case upTo > plan.Steps:
		return Plan{}, fmt.Errorf("rollout %s has %d steps: --step %d is not one of them; approve them all with %s",
			progress.Ref(ro), plan.Steps, upTo, progress.Command(ro, "promote-full"))
	default:
		plan.Step = upTo
	}
	return plan, nil
}

// Full plans the approval of every remaining step of ro's release, in
// whatever state its current step is.
func Full(ro *rolloutsv1beta1.Rollout) (Plan, error) {
	plan, _, err := start(ro)
	if err != nil {
		return Plan{}, err
	}
	plan.Step = plan.Steps
	return plan, nil
}

// start checks that ro has a release an approval can move on.
func start(ro *rolloutsv1beta1.Rollout) (Plan, progress.Progress, error) {
	p, ok := progress.Of(ro)
	if a, aborted := progress.AbortOf(ro); aborted {
		return Plan{}, p, fmt.Errorf("the release of revision %s by rollout %s was rolled back by %s at step %d: approvals are refused; "+
			"revert the commit in Git, or push a new one; to release it again: %s", a.Revision, progress.Ref(ro), a.Who(), a.Step, progress.Command(ro, "retry"))
	}
	if !ok || !progress.InRelease(ro) {
		state := rolloutsv1beta1.CanaryStepState("none")
		if ok {
			state = p.Common.CurrentStepState
		}
		return Plan{}, p, fmt.Errorf("rollout %s has no release in progress (phase %s, state %s): nothing to approve; a release starts when the pod template of %s %s changes",
			progress.Ref(ro), phaseOf(ro), state, ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name)
	}
	if ro.Spec.Strategy.Paused {
		return Plan{}, p, fmt.Errorf("rollout %s is paused (spec.strategy.paused): an approval would wait until it is resumed; resume it first with %s",
			progress.Ref(ro), progress.Command(ro, "resume"))
	}
	if p.Revision == "" {
		return Plan{}, p, fmt.Errorf("rollout %s does not name the revision it releases yet: wait a moment and retry; %s shows it",
			progress.Ref(ro), progress.Command(ro, "status"))
	}
	return Plan{From: p.Common.CurrentStepIndex, Steps: progress.Steps(ro), Revision: p.Revision}, p, nil
}

func phaseOf(ro *rolloutsv1beta1.Rollout) rolloutsv1beta1.RolloutPhase {
	if ro.Status.Phase == "" {
		return "unknown"
	}
	return ro.Status.Phase
}

// Records returns ro's record of applied approvals (sluice.dev/approvals);
// a damaged record reads as empty.
func Records(ro *rolloutsv1beta1.Rollout) []approval.Approval {
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		return nil
	}
	return records
}

// Added returns the records of after that before does not hold: the
// approvals applied in between. The record is append-only (the oldest fall
// off the front), so a record is new when no equal one was there before.
func Added(before, after []approval.Approval) []approval.Approval {
	var added []approval.Approval
	for _, a := range after {
		seen := false
		for _, b := range before {
			if same(a, b) {
				seen = true
				break
			}
		}
		if !seen {
			added = append(added, a)
		}
	}
	return added
}

func same(a, b approval.Approval) bool {
	if a.Revision != b.Revision || a.Step != b.Step || a.By != b.By || a.Via != b.Via || (a.At == nil) != (b.At == nil) {
		return false
	}
	return a.At == nil || a.At.Equal(*b.At)
}

// Outcome is what became of a written approval.
type Outcome struct {
	// Done is true once nothing more is to be waited for.
	Done bool
	// Applied are the approvals of the plan's revision that sluice applied
	// since the approval was written.
	Applied []approval.Approval
	// MovedOn describes how the release moved on without recording this
	// approval (approved otherwise, rolled back, restarted); empty when it
	// did not.
	MovedOn string
}

// Approved judges an approval of the current step (plan.From) written when
// the record held before: done once sluice applied it, or once the release
// moved past the step another way.
func Approved(ro *rolloutsv1beta1.Rollout, plan Plan, before []approval.Approval) Outcome {
	o := Outcome{Applied: ofRevision(Added(before, Records(ro)), plan.Revision)}
	for _, a := range o.Applied {
		if a.Step == plan.From {
			o.Done = true
			return o
		}
	}
	p, ok := progress.Of(ro)
	switch {
	case !ok:
		o.MovedOn = "its status was cleared"
	case p.Revision != plan.Revision:
		o.MovedOn = fmt.Sprintf("it now releases revision %s", p.Revision)
	case !progress.InRelease(ro):
		o.MovedOn = fmt.Sprintf("the release is over (phase %s, state %s)", ro.Status.Phase, p.Common.CurrentStepState)
	case p.Common.CurrentStepIndex != plan.From:
		o.MovedOn = fmt.Sprintf("it is at step %d in state %s", p.Common.CurrentStepIndex, p.Common.CurrentStepState)
	}
	o.Done = o.MovedOn != ""
	return o
}

// Completed judges a promote-full approval: done once the release of the
// plan's revision finished, or the Rollout releases something else.
func Completed(ro *rolloutsv1beta1.Rollout, plan Plan, before []approval.Approval) Outcome {
	o := Outcome{Applied: ofRevision(Added(before, Records(ro)), plan.Revision)}
	p, ok := progress.Of(ro)
	switch {
	case !ok:
		o.MovedOn = "its status was cleared"
	case p.Revision != plan.Revision:
		o.MovedOn = fmt.Sprintf("it now releases revision %s", p.Revision)
	case p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted && ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy:
		o.Done = true
		return o
	case ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing:
		o.MovedOn = fmt.Sprintf("the release ended in phase %s, state %s", ro.Status.Phase, p.Common.CurrentStepState)
	}
	o.Done = o.MovedOn != ""
	return o
}

func ofRevision(records []approval.Approval, revision string) []approval.Approval {
	var out []approval.Approval
	for _, r := range records {
		if r.Revision == revision {
			out = append(out, r)
		}
	}
	return out
}
