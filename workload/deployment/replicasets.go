package deployment

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// replicaSets are the ReplicaSets a Deployment controls, split into the one
// whose template is the Deployment's (current) and the others.
type replicaSets struct {
	current *appsv1.ReplicaSet
	old     []*appsv1.ReplicaSet
}

// listReplicaSets finds the ReplicaSets d controls. The cache tells which
// exist (listing the API server directly is slow: it waits for the watch
// cache); the ones that matter (any with replicas, and the one of d's
// template, found by the name Kubernetes gives it) are then read through
// fresh, which is never older than sluice's own last write of them, so
// decisions never rest on sizes sluice itself has changed since.
func listReplicaSets(ctx context.Context, cached, fresh client.Reader, d *appsv1.Deployment) (*replicaSets, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	list := &appsv1.ReplicaSetList{}
	if err := cached.List(ctx, list, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing replicasets of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	names := map[string]bool{d.Name + "-" + revisions.TemplateHash(&d.Spec.Template, d.Status.CollisionCount): true}
	for i := range list.Items {
		rs := &list.Items[i]
		if replicasOfSet(rs) > 0 || rs.Status.Replicas > 0 || revisions.Equal(&rs.Spec.Template, &d.Spec.Template) {
			names[rs.Name] = true
		}
	}
	sets := &replicaSets{}
	for i := range list.Items {
		if rs := &list.Items[i]; !names[rs.Name] && owned(rs, d) {
			sets.old = append(sets.old, rs) // idle history: cached is good enough
		}
	}
	for name := range names {
		rs := &appsv1.ReplicaSet{}
		err := fresh.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: name}, rs)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading replicaset %s/%s: %w", d.Namespace, name, err)
		}
		if !owned(rs, d) {
			continue
		}
		if sets.current == nil && revisions.Equal(&rs.Spec.Template, &d.Spec.Template) {
			sets.current = rs
			continue
		}
		sets.old = append(sets.old, rs)
	}
	sort.Slice(sets.old, func(i, j int) bool { return revisionOf(sets.old[i]) > revisionOf(sets.old[j]) })
	return sets, nil
}

// owned reports whether d controls rs and rs is not being deleted.
func owned(rs *appsv1.ReplicaSet, d *appsv1.Deployment) bool {
	ref := metav1.GetControllerOf(rs)
	return ref != nil && ref.UID == d.UID && rs.DeletionTimestamp == nil
}

// oldReplicas is the sum of spec.replicas of the non-current ReplicaSets.
func (s *replicaSets) oldReplicas() int32 {
	var n int32
	for _, rs := range s.old {
		n += replicasOfSet(rs)
	}
	return n
}

// stableCandidate is the ReplicaSet being replaced: the active old one with
// the highest revision, or the newest old one when none is active.
func (s *replicaSets) stableCandidate() *appsv1.ReplicaSet {
	for _, rs := range s.old {
		if replicasOfSet(rs) > 0 {
			return rs
		}
	}
	if len(s.old) > 0 {
		return s.old[0]
	}
	return nil
}

// armed reports whether new pods can no longer count as available: the
// Deployment and its current ReplicaSet carry the inflated minReadySeconds
// and the ReplicaSet's status reflects it.
func (s *replicaSets) armed(d *appsv1.Deployment) bool {
	return armed(d, s.current)
}

// armed reports whether the new pods of d, in its current ReplicaSet rs
// (nil: none yet), can no longer count as available.
//
// While d is paused the arm is new: it counts once the ReplicaSet
// controller observed the held minReadySeconds (a status of an older
// generation may have been computed with the user's, and a pod counted
// available under it). d is unpaused only for a move, after confirmMove
// found the arm observed on the ReplicaSet as the API server holds it; from
// then on every status is computed with the held timing, and a generation
// not yet observed is Kubernetes' rolling update scaling the set, which
// does not disarm it.
func armed(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if d.Spec.MinReadySeconds != heldMinReadySeconds {
		return false
	}
	if rs == nil {
		return true
	}
	return rs.Spec.MinReadySeconds == heldMinReadySeconds &&
		(!d.Spec.Paused || rs.Status.ObservedGeneration >= rs.Generation) &&
		rs.Status.AvailableReplicas == 0
}

func replicasOfSet(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	v, _ := strconv.ParseInt(rs.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return v
}

// StableRevision picks the pod-template-hash of the revision a release of
// d replaces from d's ReplicaSets: of those d controls whose template is not
// d's, the newest that has pods, else the newest. It is empty when there is
// none. The canary style (workload/canarydeployment) records it when it
// claims d.
func StableRevision(d *appsv1.Deployment, sets []appsv1.ReplicaSet) string {
	var best *appsv1.ReplicaSet
	better := func(rs *appsv1.ReplicaSet) bool {
		if best == nil {
			return true
		}
		if active, bestActive := replicasOfSet(rs) > 0, replicasOfSet(best) > 0; active != bestActive {
			return active
		}
		return revisionOf(rs) > revisionOf(best)
	}
	for i := range sets {
		rs := &sets[i]
		ref := metav1.GetControllerOf(rs)
		if ref == nil || ref.UID != d.UID || rs.DeletionTimestamp != nil || revisions.Equal(&rs.Spec.Template, &d.Spec.Template) {
			continue
		}
		if better(rs) {
			best = rs
		}
	}
	if best == nil {
		return ""
	}
	return best.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
}

// currentFromAPIServer reads the ReplicaSet of d's template from the API
// server (nil when there is none). An uncached read, made once per batch:
// see Releaser.confirmMove.
func currentFromAPIServer(ctx context.Context, reader client.Reader, d *appsv1.Deployment) (*appsv1.ReplicaSet, error) {
	name := d.Name + "-" + revisions.TemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	rs := &appsv1.ReplicaSet{}
	err := reader.Get(ownwrites.FromAPIServer(ctx), client.ObjectKey{Namespace: d.Namespace, Name: name}, rs)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading replicaset %s/%s: %w", d.Namespace, name, err)
	}
	if !owned(rs, d) || !revisions.Equal(&rs.Spec.Template, &d.Spec.Template) {
		return nil, nil
	}
	return rs, nil
}
