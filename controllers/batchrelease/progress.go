package batchrelease

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// progressOnly reports whether after differs from before only in the pod
// counts of the batch and the message that spells them out (and the
// Progressing condition that repeats the message): such a write is spaced
// out (controllers/spacing). A change of batch, batch state, observed
// generation or anything else is written at once.
func progressOnly(before, after *rolloutsv1beta1.BatchReleaseStatus) bool {
	if apiequality.Semantic.DeepEqual(before, after) {
		return false
	}
	a := after.DeepCopy()
	a.Message = before.Message
	a.CanaryStatus.UpdatedReplicas = before.CanaryStatus.UpdatedReplicas
	a.CanaryStatus.UpdatedReadyReplicas = before.CanaryStatus.UpdatedReadyReplicas
	if len(a.Conditions) != len(before.Conditions) {
		return false
	}
	for i := range a.Conditions {
		c, b := &a.Conditions[i], &before.Conditions[i]
		if c.Type == rolloutsv1beta1.RolloutConditionProgressing && c.Status == b.Status && c.Reason == b.Reason {
			c.Message, c.LastUpdateTime = b.Message, b.LastUpdateTime
		}
	}
	return apiequality.Semantic.DeepEqual(before, a)
}
