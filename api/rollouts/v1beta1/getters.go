package v1beta1

import "k8s.io/apimachinery/pkg/util/intstr"

// Steps returns the steps of whichever of canary and blueGreen is set.
func (s *RolloutStrategy) Steps() []CanaryStep {
	switch {
	case s.Canary != nil:
		return s.Canary.Steps
	case s.BlueGreen != nil:
		return s.BlueGreen.Steps
	}
	return nil
}

// GetFailureThreshold returns the failureThreshold of whichever of canary
// and blueGreen is set.
func (s *RolloutStrategy) GetFailureThreshold() *intstr.IntOrString {
	switch {
	case s.Canary != nil:
		return s.Canary.FailureThreshold
	case s.BlueGreen != nil:
		return s.BlueGreen.FailureThreshold
	}
	return nil
}

// TrafficRoutings returns the trafficRoutings of whichever of canary and
// blueGreen is set.
func (s *RolloutStrategy) TrafficRoutings() []TrafficRoutingRef {
	switch {
	case s.Canary != nil:
		return s.Canary.TrafficRoutings
	case s.BlueGreen != nil:
		return s.BlueGreen.TrafficRoutings
	}
	return nil
}

// TrafficRoutingRef names the TrafficRouting ro releases through: the
// trafficRoutingRef of whichever of canary and blueGreen is set, or else
// the v1alpha1 annotation rollouts.kruise.io/trafficrouting.
func (ro *Rollout) TrafficRoutingRef() string {
	name := ""
	switch s := ro.Spec.Strategy; {
	case s.Canary != nil:
		name = s.Canary.TrafficRoutingRef
	case s.BlueGreen != nil:
		name = s.BlueGreen.TrafficRoutingRef
	}
	if name == "" {
		name = ro.Annotations[TrafficRoutingAnnotation]
	}
	return name
}
