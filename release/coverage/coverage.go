// Package coverage says which parts of a Rollout this version of sluice
// covers: the controller reports them in the Supported condition (and holds
// a release that something blocks), the Rollout webhook refuses at
// admission what it can know then, and the workload webhook decides through
// Active whether to hold an update.
package coverage

import (
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload/batch"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// Style is how a Rollout produces new-revision pods: BlueGreen, Canary (an
// extra canary workload: enableExtraWorkloadForCanary) or Partition (in
// place, the default).
func Style(ro *rolloutsv1beta1.Rollout) rolloutsv1beta1.RollingStyleType {
	switch s := ro.Spec.Strategy; {
	case s.BlueGreen != nil:
		return rolloutsv1beta1.BlueGreenRollingStyle
	case s.Canary != nil && s.Canary.EnableExtraWorkloadForCanary:
		return rolloutsv1beta1.CanaryRollingStyle
	}
	return rolloutsv1beta1.PartitionRollingStyle
}

// styleField names the field that chose a rolling style.
func styleField(s rolloutsv1beta1.RollingStyleType) string {
	if s == rolloutsv1beta1.BlueGreenRollingStyle {
		return "spec.strategy.blueGreen"
	}
	return "spec.strategy.canary.enableExtraWorkloadForCanary"
}

// Analyze returns the settings of ro that keep sluice from releasing its
// workload at all (blocking) and those that are stored without effect yet
// (ignored). Each entry names the field.
func Analyze(ro *rolloutsv1beta1.Rollout) (blocking, ignored []string) {
	if ok, why := kinds.Supported(ro.Spec.WorkloadRef, ""); !ok {
		blocking = append(blocking, "spec.workloadRef: "+why)
	} else if ok, why := kinds.Supported(ro.Spec.WorkloadRef, Style(ro)); !ok {
		blocking = append(blocking, styleField(Style(ro))+": "+why)
	}
	s := ro.Spec.Strategy
	prefix, routings := "spec.strategy.canary", []rolloutsv1beta1.TrafficRoutingRef(nil)
	switch {
	case s.Canary != nil:
		routings = s.Canary.TrafficRoutings
		if s.Canary.PatchPodTemplateMetadata != nil && !s.Canary.EnableExtraWorkloadForCanary {
			ignored = append(ignored, prefix+".patchPodTemplateMetadata (only used with enableExtraWorkloadForCanary)")
		}
	case s.BlueGreen != nil:
		prefix, routings = "spec.strategy.blueGreen", s.BlueGreen.TrafficRoutings
	default:
		return append(blocking, "spec.strategy: set canary or blueGreen"), ignored
	}
	for i, r := range routings {
		// A route sluice cannot drive would release the pods with no
		// traffic control: the release waits instead.
		blocking = append(blocking, providers.Unsupported(fmt.Sprintf("%s.trafficRoutings[%d]", prefix, i), r)...)
	}
	for i, st := range s.Steps() {
		for j, r := range routings {
			at := fmt.Sprintf("%s.trafficRoutings[%d]", prefix, j)
			if err := providers.Check(r, st.TrafficRoutingStrategy); err != nil {
				// Never release with a match dropped.
				blocking = append(blocking, fmt.Sprintf("%s.steps[%d] cannot be expressed by %s: %v", prefix, i, at, err))
			}
			for _, why := range providers.Ignores(r, st.TrafficRoutingStrategy) {
				ignored = append(ignored, fmt.Sprintf("%s.steps[%d] through %s: %s", prefix, i, at, why))
			}
		}
	}
	return blocking, ignored
}

// Active reports whether ro holds its workload's updates: enabled and not
// being deleted. A Rollout that Analyze (or the workload's own settings)
// finds blocking holds them too: the release waits, held at its step, until
// what blocks it is fixed or the Rollout is disabled, never releasing the
// workload without what the Rollout asks for.
func Active(ro *rolloutsv1beta1.Rollout) bool {
	return !ro.Spec.Disabled && ro.DeletionTimestamp.IsZero()
}

// Fit lists the steps of ro that, at the workload's current replica count,
// ask for fewer pods than a step before them: a plan mixing numbers and
// percentages (3, then 50%) fits 10 replicas and not 4, which an HPA may
// scale the workload to at any time. Such a step keeps the pods released
// so far and releases no more. Admission never refuses a Rollout for it
// (the replica count is not the Rollout's to change); the Supported
// condition names each such step, so the user can fix the plan.
func Fit(ro *rolloutsv1beta1.Rollout, replicas int32) []string {
	prefix := "spec.strategy.canary"
	if ro.Spec.Strategy.BlueGreen != nil {
		prefix = "spec.strategy.blueGreen"
	}
	var out []string
	most, mostAt := int32(0), -1
	for i, st := range ro.Spec.Strategy.Steps() {
		n, err := batch.DesiredUpdated(st.Replicas, replicas)
		if err != nil {
			continue // admission names an invalid step
		}
		if mostAt >= 0 && n < most {
			out = append(out, fmt.Sprintf("%s.steps[%d].replicas %s is %d of the workload's %d replicas, fewer than the %d of steps[%d].replicas %s: the step releases no more pods",
				prefix, i, st.Replicas.String(), n, replicas, most, mostAt, ro.Spec.Strategy.Steps()[mostAt].Replicas.String()))
			continue
		}
		most, mostAt = n, i
	}
	return out
}
