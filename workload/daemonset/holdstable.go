package daemonset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/sluice-dev/sluice/workload"
)

// HoldStable implements workload.Releaser. Kubernetes' DaemonSet controller
// creates every pod from the DaemonSet's current pod template, so a node
// whose pod runs the new revision cannot get a pod of the stable revision
// back without the template changing, which sluice never does (it belongs
// to whoever applies the DaemonSet). The DaemonSet stays held (OnDelete: no
// more pods are replaced) and the error says what to do.
func (r *Releaser) HoldStable(ctx context.Context) (bool, error) {
	ds, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	o, err := r.observe(ctx, ds)
	if err != nil {
		return false, err
	}
	if o.t.Updated == 0 && o.t.InFlight == 0 {
		return o.t.settled(ds.Status.DesiredNumberScheduled) && int32(len(o.t.Old)) == ds.Status.DesiredNumberScheduled && o.t.Unavailable == 0, nil //nolint:gosec // pod counts fit
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		return false, fmt.Errorf("daemonset %s was handed back outside sluice (its update strategy is %s), so it cannot be held: revert the commit in Git: %w",
			r.key, ds.Spec.UpdateStrategy.Type, workload.ErrCannotHoldStable)
	}
	return false, fmt.Errorf("DaemonSet %s: %d of its pods run the new revision, and a DaemonSet creates pods only from its current pod template, "+
		"so they cannot go back to the stable revision while the template stays; no more pods are replaced; revert the commit in Git "+
		"(the template back to the stable revision rolls them back at once): %w", r.key, o.t.Updated+o.t.InFlight, workload.ErrCannotHoldStable)
}
