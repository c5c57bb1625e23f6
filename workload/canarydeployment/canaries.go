package canarydeployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// canarySet is what exists of a stable Deployment's canaries.
type canarySet struct {
	// all are the Deployments labelled Label=<stable>, as the API server
	// has them (some may be being deleted).
	all []*appsv1.Deployment
	// foreign is true when a Deployment with the wanted canary name exists
	// but is not a canary of this stable Deployment.
	foreign bool
}

// named returns the canary called name, or nil.
func (s canarySet) named(name string) *appsv1.Deployment {
	for _, d := range s.all {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// canaries finds the canary Deployments of the stable Deployment: those
// lister lists with Label=<stable>, plus the one named want (the canary of
// the current revision, which the cache may not have seen yet). Each is
// read fresh, so a canary the cache still lists after its deletion is not
// reported.
func (r *Releaser) canaries(ctx context.Context, lister client.Reader, want string) (canarySet, error) {
	var set canarySet
	list := &appsv1.DeploymentList{}
	if err := lister.List(ctx, list, client.InNamespace(r.key.Namespace), client.MatchingLabels{Label: r.key.Name}); err != nil {
		return set, fmt.Errorf("listing the canary deployments of %s: %w", r.key, err)
	}
	names := map[string]bool{}
	if want != "" {
		names[want] = true
	}
	for i := range list.Items {
		names[list.Items[i].Name] = true
	}
	for name := range names {
		d := &appsv1.Deployment{}
		err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.key.Namespace, Name: name}, d)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return set, fmt.Errorf("reading deployment %s/%s: %w", r.key.Namespace, name, err)
		}
		if d.Labels[Label] != r.key.Name {
			set.foreign = set.foreign || name == want
			continue
		}
		set.all = append(set.all, d)
	}
	return set, nil
}

// deleteCanaries deletes the given canaries. The deletion propagates in
// the background: never orphaned, since the stable Deployment's selector
// also matches the canary's ReplicaSet and would adopt it.
func (r *Releaser) deleteCanaries(ctx context.Context, canaries []*appsv1.Deployment) error {
	for _, d := range canaries {
		if d.DeletionTimestamp != nil {
			continue
		}
		uid := d.UID
		err := r.client.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting canary deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}
