package progress

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Aborted is an aborted release as the plugin and the web view show it.
type Aborted struct {
	rolloutsv1beta1.AbortStatus
	// Blocked says why the pods cannot go back to the stable revision (the
	// workload's kind needs its template changed); empty when they can.
	Blocked string
}

// AbortOf returns the aborted release of ro, and false when its release is
// not aborted.
func AbortOf(ro *rolloutsv1beta1.Rollout) (Aborted, bool) {
	ab := ro.Status.Aborted
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ab == nil {
		return Aborted{}, false
	}
	a := Aborted{AbortStatus: *ab}
	if c := Condition(ro, rolloutsv1beta1.RolloutConditionStalled); c != nil && c.Status == corev1.ConditionTrue && c.Reason == "CannotHoldStable" {
		a.Blocked = c.Message
	}
	return a, true
}

// Who names who aborted it and how: "ops via github-label".
func (a Aborted) Who() string {
	by, via := a.By, a.Via
	if by == "" {
		by = "unknown"
	}
	if via == "" {
		via = "annotation"
	}
	return by + " via " + via
}

// State says where the abort is: holding every pod on the stable revision
// already, still moving them back, or blocked.
func (a Aborted) State() string {
	switch {
	case a.Blocked != "":
		return "blocked: " + a.Blocked
	case a.Held:
		return "every pod and all traffic on revision " + a.StableRevision
	}
	return "moving every pod and all traffic back to revision " + a.StableRevision
}

// Advice says what ends the abort, with the command that retries it.
func (a Aborted) Advice(ro *rolloutsv1beta1.Rollout) []string {
	return []string{
		"Revert the commit in Git (the template back to revision " + a.StableRevision + " completes the rollback), or push a new one (released from step 1).",
		fmt.Sprintf("Release revision %s again from step 1 with:", a.Revision),
		"  " + Command(ro, "retry"),
	}
}
