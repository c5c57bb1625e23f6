package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// The annotations Kubernetes' Deployment controller keeps on each
// ReplicaSet: the Deployment's replicas, and its replicas plus maxSurge,
// as of its last scaling.
const (
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// HoldStable implements workload.Releaser: it puts the Deployment in the
// Hold gate (paused, maxSurge 0, the user's maxUnavailable and timing) and
// then, look after look, moves pods from the other ReplicaSets to the one
// of the stable revision, as holdplan.go explains, never changing the pod
// template. A blue-green Deployment first loses its new pods at once (every
// old pod still runs), then takes the Hold gate.
func (r *Releaser) HoldStable(ctx context.Context) (bool, error) {
	d, sets, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	if _, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !held {
		return false, fmt.Errorf("deployment %s was handed back outside sluice (it has no %s annotation), so it cannot be held on its stable revision; revert the commit in Git: %w",
			r.key, rolloutsv1beta1.DeploymentOriginalAnnotation, workload.ErrCannotHoldStable)
	}
	stableHash := d.Labels[rolloutsv1beta1.StableRevisionLabel]
	stable := sets.withHash(stableHash)
	if stableHash == "" || stable == nil {
		return false, fmt.Errorf("deployment %s has no ReplicaSet of its stable revision %q left (see revisionHistoryLimit), so its pods cannot go back to it; revert the commit in Git: %w",
			r.key, stableHash, workload.ErrCannotHoldStable)
	}
	_, unavailable, err := r.bounds(d)
	if err != nil {
		return false, err
	}
	if r.blueGreen {
		if done, err := r.dropBlueGreen(ctx, d, sets); err != nil || !done {
			return false, err
		}
	}
	if spec := specPatch(planGate(gateInput{Unavailable: unavailable}), d); len(spec) > 0 {
		return false, r.patchGuarded(ctx, d, map[string]any{"spec": spec})
	}
	replicas := replicasOf(d)
	if !settledForHold(d, sets, replicas) {
		return false, nil // Kubernetes is still scaling or creating pods
	}
	states, ready := holdStates(sets, stable)
	budget := max(unavailable, 1) - max(replicas-ready, 0)
	plan := planHold(states, replicas, budget)
	if plan.done {
		return true, nil
	}
	log := ctrl.LoggerFrom(ctx)
	for _, w := range plan.writes {
		log.Info("Moving pods back to the stable revision", "deployment", r.key, "replicaSet", w.name, "replicas", w.replicas)
		if err := r.scaleReplicaSet(ctx, d.Namespace, w); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil // Kubernetes wrote it meanwhile: plan again from a fresh read
			}
			return false, err
		}
	}
	return false, nil
}

// dropBlueGreen removes the new pods of a blue-green Deployment at once:
// every old pod still runs, and no request goes to the new ones any more.
// It reports true once the new ReplicaSet has none.
func (r *Releaser) dropBlueGreen(ctx context.Context, d *appsv1.Deployment, sets *replicaSets) (bool, error) {
	cur := sets.current
	if cur == nil || replicasOfSet(cur) == 0 {
		return true, nil
	}
	if !d.Spec.Paused {
		// Mid-step: hold first, with the surge the new pods have, which
		// Kubernetes' scaling of a paused Deployment leaves alone.
		g := planBlueGreenGate(gateInput{Replicas: replicasOf(d), NewReplicas: replicasOfSet(cur)})
		return false, r.patchGuarded(ctx, d, map[string]any{"spec": specPatch(g, d)})
	}
	// With the new ReplicaSet at 0 only the old one is active, which
	// Kubernetes sizes to replicas: it already is.
	err := r.scaleReplicaSet(ctx, d.Namespace, rsWrite{name: cur.Name, replicas: 0})
	if apierrors.IsConflict(err) {
		return false, nil
	}
	return false, err
}

// settledForHold reports whether Kubernetes has caught up with the
// Deployment d: it saw its spec, each ReplicaSet runs the pods it asks
// for, and, with several active, they sum to replicas and carry the
// annotations of this replica count with maxSurge 0, so that Kubernetes'
// next scaling moves exactly what the planner expects.
func settledForHold(d *appsv1.Deployment, sets *replicaSets, replicas int32) bool {
	if d.Status.ObservedGeneration < d.Generation {
		return false
	}
	var active []*appsv1.ReplicaSet
	var sum int32
	for _, rs := range sets.all() {
		if rs.Status.ObservedGeneration < rs.Generation || rs.Status.Replicas != replicasOfSet(rs) {
			return false
		}
		if replicasOfSet(rs) > 0 {
			active = append(active, rs)
			sum += replicasOfSet(rs)
		}
	}
	if len(active) < 2 {
		return true
	}
	want := strconv.Itoa(int(replicas))
	for _, rs := range active {
		if rs.Annotations[maxReplicasAnnotation] != want || rs.Annotations[desiredReplicasAnnotation] != want {
			return false
		}
	}
	return sum == replicas
}

// holdStates describes sets to the planner, and counts their ready pods.
func holdStates(sets *replicaSets, stable *appsv1.ReplicaSet) ([]rsState, int32) {
	all := sets.all()
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].CreationTimestamp, all[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return all[i].Name < all[j].Name
	})
	var out []rsState
	var ready int32
	for i, rs := range all {
		ready += rs.Status.ReadyReplicas
		if replicasOfSet(rs) == 0 && rs != stable && rs != sets.current {
			continue
		}
		out = append(out, rsState{
			name: rs.Name, replicas: replicasOfSet(rs), ready: rs.Status.ReadyReplicas,
			stable: rs == stable, current: rs == sets.current, newer: i,
		})
	}
	return out, ready
}

// scaleReplicaSet sets spec.replicas of a ReplicaSet read fresh, guarded by
// the resourceVersion read.
func (r *Releaser) scaleReplicaSet(ctx context.Context, namespace string, w rsWrite) error {
	rs := &appsv1.ReplicaSet{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: w.name}, rs); err != nil {
		return fmt.Errorf("reading replicaset %s/%s: %w", namespace, w.name, err)
	}
	b, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": rs.ResourceVersion},
		"spec":     map[string]any{"replicas": w.replicas},
	})
	if err != nil {
		return err
	}
	if err := r.client.Patch(ctx, rs, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return fmt.Errorf("scaling replicaset %s/%s to %d: %w", namespace, w.name, w.replicas, err)
	}
	return nil
}

// patchGuarded sends a merge patch of d guarded by the resourceVersion
// read; a conflict is no error (the next look plans again).
func (r *Releaser) patchGuarded(ctx context.Context, d *appsv1.Deployment, patch map[string]any) error {
	err := r.patch(ctx, d, patch)
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// withHash returns the ReplicaSet whose pod-template-hash is hash, if any.
func (s *replicaSets) withHash(hash string) *appsv1.ReplicaSet {
	if hash == "" {
		return nil
	}
	for _, rs := range s.all() {
		if rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			return rs
		}
	}
	return nil
}

// all lists every ReplicaSet: the current one, then the others.
func (s *replicaSets) all() []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	if s.current != nil {
		out = append(out, s.current)
	}
	return append(out, s.old...)
}
