// Package support says which parts of a Rollout this version of sluice acts
// on. Both the controller (for the Supported condition) and the workload
// webhook (to decide whether to hold an update) use it, so they never
// disagree.
package support

import (
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload/lookup"
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
	if ok, why := lookup.Supported(ro.Spec.WorkloadRef, ""); !ok {
		blocking = append(blocking, "spec.workloadRef: "+why)
	} else if ok, why := lookup.Supported(ro.Spec.WorkloadRef, Style(ro)); !ok {
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
		ignored = append(ignored, providers.Unsupported(fmt.Sprintf("%s.trafficRoutings[%d]", prefix, i), r)...)
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

// Active reports whether ro holds its workload's updates: enabled, not
// being deleted, and with nothing blocking.
func Active(ro *rolloutsv1beta1.Rollout) bool {
	if ro.Spec.Disabled || !ro.DeletionTimestamp.IsZero() {
		return false
	}
	blocking, _ := Analyze(ro)
	return len(blocking) == 0
}
