package rollout

import (
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The step machine works on status.canaryStatus. A blue-green Rollout
// keeps its progress in status.blueGreenStatus, as OpenKruise does (so
// kubectl-kruise approves it there): these two functions move it in and out.

// commonStatus is the step progress of a Rollout, whichever status holds it.
func commonStatus(st *rolloutsv1beta1.RolloutStatus) *rolloutsv1beta1.CommonStatus {
	switch {
	case st.CanaryStatus != nil:
		return &st.CanaryStatus.CommonStatus
	case st.BlueGreenStatus != nil:
		return &st.BlueGreenStatus.CommonStatus
	}
	return nil
}

// toCanaryView moves a blue-green Rollout's blueGreenStatus into
// canaryStatus for the step machine.
func toCanaryView(ro *rolloutsv1beta1.Rollout) {
	bg := ro.Status.BlueGreenStatus
	if ro.Spec.Strategy.BlueGreen == nil || bg == nil {
		return
	}
	ro.Status.CanaryStatus = &rolloutsv1beta1.CanaryStatus{
		CommonStatus:        bg.CommonStatus,
		CanaryRevision:      bg.UpdatedRevision,
		CanaryReplicas:      bg.UpdatedReplicas,
		CanaryReadyReplicas: bg.UpdatedReadyReplicas,
	}
	ro.Status.BlueGreenStatus = nil
}

// fromCanaryView moves the step machine's canaryStatus of a blue-green
// Rollout back into blueGreenStatus.
func fromCanaryView(ro *rolloutsv1beta1.Rollout, st *rolloutsv1beta1.RolloutStatus) {
	cs := st.CanaryStatus
	if ro.Spec.Strategy.BlueGreen == nil || cs == nil {
		return
	}
	st.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{
		CommonStatus:         cs.CommonStatus,
		UpdatedRevision:      cs.CanaryRevision,
		UpdatedReplicas:      cs.CanaryReplicas,
		UpdatedReadyReplicas: cs.CanaryReadyReplicas,
	}
	st.CanaryStatus = nil
}
