package canarydeployment

import (
	"context"
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// HoldStable implements workload.Releaser: the stable Deployment never
// stopped running the stable revision at full size (it stays paused), so
// holding it there deletes the canary Deployments, whose pods carry no
// traffic any more once the abort routed every request to the stable pods.
// It reports true once no canary is left and the stable pods are ready.
func (r *Releaser) HoldStable(ctx context.Context) (bool, error) {
	d, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	if _, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !held || !d.Spec.Paused {
		return false, fmt.Errorf("deployment %s was handed back outside sluice (unpaused, or without its %s annotation), so it cannot be held on its stable revision; revert the commit in Git: %w",
			r.key, rolloutsv1beta1.DeploymentOriginalAnnotation, workload.ErrCannotHoldStable)
	}
	set, err := r.canaries(ctx, r.reader, "")
	if err != nil {
		return false, err
	}
	if len(set.all) > 0 {
		return false, r.deleteCanaries(ctx, set.all)
	}
	n := replicas(d)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == n && d.Status.ReadyReplicas >= n && d.Status.UpdatedReplicas == 0, nil
}
