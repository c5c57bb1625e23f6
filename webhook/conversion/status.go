package conversion

import (
	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// statusToV1beta1 converts a v1alpha1 status. Its canaryStatus is the
// progress of either strategy: blueGreen says which. The top-level
// currentStepIndex and currentStepState mirror it.
func statusToV1beta1(in *rolloutsv1alpha1.RolloutStatus, blueGreen bool) rolloutsv1beta1.RolloutStatus {
	out := rolloutsv1beta1.RolloutStatus{
		ObservedGeneration: in.ObservedGeneration,
		Conditions:         in.Conditions,
		Phase:              in.Phase,
		Message:            in.Message,
		Aborted:            in.Aborted,
	}
	cs := in.CanaryStatus
	if cs == nil {
		return out
	}
	common := rolloutsv1beta1.CommonStatus{
		ObservedWorkloadGeneration: cs.ObservedWorkloadGeneration,
		ObservedRolloutID:          cs.ObservedRolloutID,
		RolloutHash:                cs.RolloutHash,
		StableRevision:             cs.StableRevision,
		PodTemplateHash:            cs.PodTemplateHash,
		CurrentStepIndex:           cs.CurrentStepIndex,
		NextStepIndex:              cs.NextStepIndex,
		FinalisingStep:             cs.FinalisingStep,
		CurrentStepState:           cs.CurrentStepState,
		Message:                    cs.Message,
		LastUpdateTime:             cs.LastUpdateTime,
	}
	if blueGreen {
		out.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{
			CommonStatus:         common,
			UpdatedRevision:      cs.CanaryRevision,
			UpdatedReplicas:      cs.CanaryReplicas,
			UpdatedReadyReplicas: cs.CanaryReadyReplicas,
		}
	} else {
		out.CanaryStatus = &rolloutsv1beta1.CanaryStatus{
			CommonStatus:        common,
			CanaryRevision:      cs.CanaryRevision,
			CanaryReplicas:      cs.CanaryReplicas,
			CanaryReadyReplicas: cs.CanaryReadyReplicas,
		}
	}
	out.CurrentStepIndex, out.CurrentStepState = cs.CurrentStepIndex, cs.CurrentStepState
	return out
}

// statusToV1alpha1 converts a v1beta1 status: the progress of the Rollout's
// strategy (blue-green when blueGreen) becomes canaryStatus. The top-level
// mirror has no v1alpha1 field; it is rebuilt from canaryStatus on the way
// back.
func statusToV1alpha1(in *rolloutsv1beta1.RolloutStatus, blueGreen bool) rolloutsv1alpha1.RolloutStatus {
	out := rolloutsv1alpha1.RolloutStatus{
		ObservedGeneration: in.ObservedGeneration,
		Conditions:         in.Conditions,
		Phase:              in.Phase,
		Message:            in.Message,
		Aborted:            in.Aborted,
	}
	var common *rolloutsv1beta1.CommonStatus
	cs := &rolloutsv1alpha1.CanaryStatus{}
	switch {
	case blueGreen && in.BlueGreenStatus != nil:
		s := in.BlueGreenStatus
		common = &s.CommonStatus
		cs.CanaryRevision, cs.CanaryReplicas, cs.CanaryReadyReplicas = s.UpdatedRevision, s.UpdatedReplicas, s.UpdatedReadyReplicas
	case !blueGreen && in.CanaryStatus != nil:
		s := in.CanaryStatus
		common = &s.CommonStatus
		cs.CanaryRevision, cs.CanaryReplicas, cs.CanaryReadyReplicas = s.CanaryRevision, s.CanaryReplicas, s.CanaryReadyReplicas
	default:
		return out
	}
	cs.ObservedWorkloadGeneration = common.ObservedWorkloadGeneration
	cs.ObservedRolloutID = common.ObservedRolloutID
	cs.RolloutHash = common.RolloutHash
	cs.StableRevision = common.StableRevision
	cs.PodTemplateHash = common.PodTemplateHash
	cs.CurrentStepIndex = common.CurrentStepIndex
	cs.NextStepIndex = common.NextStepIndex
	cs.FinalisingStep = common.FinalisingStep
	cs.CurrentStepState = common.CurrentStepState
	cs.Message = common.Message
	cs.LastUpdateTime = common.LastUpdateTime
	out.CanaryStatus = cs
	return out
}
