package rollout

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// progressOnly reports whether after differs from before only in the pod
// counts of the release and the message that spells them out: such a
// write is spaced out (controllers/spacing).
func progressOnly(before, after *rolloutsv1beta1.RolloutStatus) bool {
	if apiequality.Semantic.DeepEqual(before, after) {
		return false
	}
	a := after.DeepCopy()
	a.Message = before.Message
	switch {
	case a.CanaryStatus != nil && before.CanaryStatus != nil:
		a.CanaryStatus.CanaryReplicas = before.CanaryStatus.CanaryReplicas
		a.CanaryStatus.CanaryReadyReplicas = before.CanaryStatus.CanaryReadyReplicas
	case a.BlueGreenStatus != nil && before.BlueGreenStatus != nil:
		a.BlueGreenStatus.UpdatedReplicas = before.BlueGreenStatus.UpdatedReplicas
		a.BlueGreenStatus.UpdatedReadyReplicas = before.BlueGreenStatus.UpdatedReadyReplicas
	}
	return apiequality.Semantic.DeepEqual(before, a)
}
