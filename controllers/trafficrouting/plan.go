package trafficrouting

import (
	"sort"
	"strings"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
)

// action is what the routes of a TrafficRouting need.
type action int

const (
	// leave changes nothing: a deleted TrafficRouting waits for its
	// Rollouts.
	leave action = iota
	// shift makes the routes carry the strategy.
	shift
	// restore gives back whatever the TrafficRouting changed.
	restore
)

// plan is what one reconcile of a TrafficRouting does, and the status it
// reports once done (or while not yet done).
type plan struct {
	act action
	// phase and message are reported when the action converged.
	phase   rolloutsv1alpha1.TrafficRoutingPhase
	message string
	// busyPhase and busyMessage are reported while it did not.
	busyPhase   rolloutsv1alpha1.TrafficRoutingPhase
	busyMessage string
	// release lets a deleted TrafficRouting go once the action converged.
	release bool
}

// planFor decides what a TrafficRouting does: deleted, it gives its routes
// back once no Rollout releases through it; while Rollouts release through
// it, it gives back what it changed and leaves the routes to them; alone,
// it makes the routes carry its strategy, or gives them back when the
// strategy is empty.
func planFor(deleting bool, s rolloutsv1alpha1.TrafficRoutingStrategy, rollouts []string) plan {
	using := strings.Join(rollouts, ", ")
	switch {
	case deleting && len(rollouts) > 0:
		msg := "Deleted, waiting for Rollouts " + using + " to finish releasing"
		return plan{act: leave, phase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, message: msg,
			busyPhase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, busyMessage: msg}
	case deleting:
		return plan{act: restore, release: true,
			phase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, message: "Routes restored",
			busyPhase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, busyMessage: "Restoring the routes"}
	case len(rollouts) > 0:
		return plan{act: restore,
			phase: rolloutsv1alpha1.TrafficRoutingPhaseProgressing, message: "Routes driven by Rollouts " + using,
			busyPhase: rolloutsv1alpha1.TrafficRoutingPhaseFinalizing, busyMessage: "Handing the routes to Rollouts " + using}
	case empty(s):
		return plan{act: restore,
			phase: rolloutsv1alpha1.TrafficRoutingPhaseHealthy, message: "Routes as written, no strategy to apply",
			busyPhase: rolloutsv1alpha1.TrafficRoutingPhaseFinalizing, busyMessage: "Restoring the routes"}
	}
	return plan{act: shift,
		phase: rolloutsv1alpha1.TrafficRoutingPhaseHealthy, message: "Routes carry the strategy",
		busyPhase: rolloutsv1alpha1.TrafficRoutingPhaseProgressing, busyMessage: "Routing the strategy"}
}

// empty reports whether s sends nothing to the new revision.
func empty(s rolloutsv1alpha1.TrafficRoutingStrategy) bool {
	return s.Weight == nil && len(s.Matches) == 0
}

// rolloutsOf returns the names of the Rollouts that hold a progressing
// finalizer on tr, sorted.
func rolloutsOf(tr *rolloutsv1alpha1.TrafficRouting) []string {
	var out []string
	for _, f := range tr.Finalizers {
		if name, ok := strings.CutPrefix(f, rolloutsv1alpha1.ProgressingFinalizerPrefix); ok && name != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
