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
