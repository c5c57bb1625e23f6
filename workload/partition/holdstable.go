package partition

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// HoldStable implements workload.Releaser. The partition goes back to the
// hold value, so the workload's controller updates no pod; then the pods of
// other revisions are deleted, within maxUnavailable (unready ones first,
// then from the highest ordinal down), and the controller recreates each
// from its current revision, which is the stable one while a release is
// in progress. A blue-green CloneSet loses its new pods at once instead:
// they run beside every old pod. Kinds whose controller creates pods only
// from the current template (Advanced DaemonSets), and workloads whose
// controller no longer names the stable revision as current (every pod was
// updated), cannot be held this way: the error says so.
func (r *Releaser) HoldStable(ctx context.Context) (bool, error) {
	o, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	if _, ok := restorePatchOf(o.u); !ok {
		return false, fmt.Errorf("%s was handed back outside sluice (it has no %s annotation), so it cannot be held on its stable revision; revert the commit in Git: %w",
			o.name(), restoreAnnotation, workload.ErrCannotHoldStable)
	}
	stable := o.u.GetLabels()[rolloutsv1beta1.StableRevisionLabel]
	if patch := r.holdPatch(o); len(patch) > 0 {
		// First of all, no further pod is updated.
		return false, r.patchGuarded(ctx, o, patch)
	}
	switch {
	case r.p.current == nil:
		return false, fmt.Errorf("%s creates its pods from its current pod template only, so pods of the new revision cannot go back to the stable revision while the template stays; "+
			"no more pods are updated; revert the commit in Git: %w", o.name(), workload.ErrCannotHoldStable)
	case stable == "":
		return false, fmt.Errorf("%s records no stable revision (label %s), so its pods cannot go back to it; revert the commit in Git: %w",
			o.name(), rolloutsv1beta1.StableRevisionLabel, workload.ErrCannotHoldStable)
	}
	if !o.fresh() {
		return false, nil
	}
	if current := o.revision(r.p.current); current != stable {
		return false, fmt.Errorf("%s names %s as its current revision, not the stable %s (every pod was updated), so pods it recreates would not run the stable revision; "+
			"no more pods are updated; revert the commit in Git: %w", o.name(), current, stable, workload.ErrCannotHoldStable)
	}
	owned, err := r.ownedPods(ctx, o)
	if err != nil {
		return false, err
	}
	n := o.replicas()
	var live, others []corev1.Pod
	var ready int32
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			continue
		}
		live = append(live, p)
		if podReady(&p) {
			ready++
		}
		if p.Labels[r.p.revisionLabel] != stable {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		replicas, _ := o.statusInt([]string{"status", "replicas"})
		return int32(len(live)) == n && ready >= n && replicas == n, nil //nolint:gosec // pod counts fit
	}
	budget := int32(len(others)) //nolint:gosec // pod counts fit
	if !r.blueGreen {
		// In place: each pod deleted is one fewer ready until it is back.
		budget = o.maxUnavailable(n) - max(n-ready, 0)
	}
	return false, r.deletePods(ctx, o, r.toReplace(o, others, budget))
}

// holdPatch is the merge patch that holds o so that its controller updates
// no pod: the hold partition (and, for a blue-green CloneSet, the rest of
// its hold: maxUnavailable 0 and the inflated minReadySeconds); empty when
// it already is.
func (r *Releaser) holdPatch(o object) map[string]any {
	if r.blueGreen {
		updated, _ := o.statusInt(r.p.updated)
		return blueGreenSpec(r.p, o.u.Object, planBlueGreen(0, updated))
	}
	if raw, ok := o.partitionRaw(); ok && fmt.Sprint(raw) == fmt.Sprint(r.p.hold) {
		return nil
	}
	return fragment(r.p, o.u.Object, r.p.hold, true)
}

// toReplace picks the pods of others to delete in this look: every unready
// one (it serves nothing), then ready ones from the highest ordinal (or
// name) down while budget lasts.
func (r *Releaser) toReplace(o object, others []corev1.Pod, budget int32) []corev1.Pod {
	name := o.u.GetName()
	sort.SliceStable(others, func(i, j int) bool {
		a, b := podReady(&others[i]), podReady(&others[j])
		if a != b {
			return !a
		}
		oi, iok := ordinalOf(name, others[i].Name)
		oj, jok := ordinalOf(name, others[j].Name)
		if iok && jok && oi != oj {
			return oi > oj
		}
		return others[i].Name > others[j].Name
	})
	var out []corev1.Pod
	for _, p := range others {
		if podReady(&p) {
			if budget <= 0 {
				break
			}
			budget--
		}
		out = append(out, p)
	}
	return out
}

// deletePods deletes pods (guarded by their UID) for the workload's
// controller to recreate from its current revision.
func (r *Releaser) deletePods(ctx context.Context, o object, pods []corev1.Pod) error {
	log := ctrl.LoggerFrom(ctx)
	for i := range pods {
		p := &pods[i]
		log.Info("Deleting pod for its controller to recreate it on the stable revision", "workload", o.name(), "pod", klog.KObj(p),
			"revision", p.Labels[r.p.revisionLabel])
		uid := p.UID
		err := r.client.Delete(ctx, p, client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting pod %s of %s: %w", p.Name, o.name(), err)
		}
	}
	return nil
}

// patchGuarded sends a merge patch guarded by the resourceVersion read; a
// conflict is no error (the next look plans again).
func (r *Releaser) patchGuarded(ctx context.Context, o object, patch map[string]any) error {
	if err := r.patch(ctx, o, patch); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}
