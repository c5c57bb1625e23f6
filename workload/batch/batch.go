// Package batch holds the arithmetic of batched releases: how many pods a
// step updates, how many unready pods a step tolerates, and how the
// Deployment's maxSurge and maxUnavailable resolve to numbers. Every
// function is pure.
package batch

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// DesiredUpdated is how many of total pods run the new revision once a step
// asking for step replicas is done: an integer as it is, a percentage of
// total rounded up; the result is capped to [0, total]. A nil step means all.
func DesiredUpdated(step *intstr.IntOrString, total int32) (int32, error) {
	if total <= 0 {
		return 0, nil
	}
	if step == nil {
		return total, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(step, int(total), true)
	if err != nil {
		return 0, fmt.Errorf("replicas %q: %w", step.String(), err)
	}
	return clamp(int32(v), 0, total), nil //nolint:gosec // bounded by total
}

// Tolerated is how many of updated pods may be unready for a step to count
// as done, given a failureThreshold: an integer as it is, a percentage of
// the updated pods rounded up. Nil tolerates none.
func Tolerated(threshold *intstr.IntOrString, updated int32) (int32, error) {
	if threshold == nil || updated <= 0 {
		return 0, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(threshold, int(updated), true)
	if err != nil {
		return 0, fmt.Errorf("failureThreshold %q: %w", threshold.String(), err)
	}
	return clamp(int32(v), 0, updated), nil //nolint:gosec // bounded by updated
}

// StepReady reports whether a step that wants desired updated pods is done:
// at least desired pods run the new revision, at most tolerated of those
// desired are unready, and at least one is ready when any is wanted.
func StepReady(desired, updated, updatedReady, tolerated int32) bool {
	if updated < desired {
		return false
	}
	if desired == 0 {
		return true
	}
	return updatedReady >= 1 && updatedReady+tolerated >= desired
}

// RollingBounds resolves a Deployment's maxSurge and maxUnavailable against
// replicas the way Kubernetes does: surge rounds up, unavailable rounds down,
// and when both come to zero unavailable becomes one. Nil values take the
// Kubernetes default of 25%.
func RollingBounds(maxSurge, maxUnavailable *intstr.IntOrString, replicas int32) (surge, unavailable int32, err error) {
	def := intstr.FromString("25%")
	if maxSurge == nil {
		maxSurge = &def
	}
	if maxUnavailable == nil {
		maxUnavailable = &def
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(maxSurge, int(replicas), true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge %q: %w", maxSurge.String(), err)
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(replicas), false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable %q: %w", maxUnavailable.String(), err)
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil //nolint:gosec // percentages of an int32
}

func clamp(v, lo, hi int32) int32 {
	return max(lo, min(v, hi))
}
