package rollout

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=trafficroutings,verbs=get;list;watch;update;patch

// resolveRoutingRef gives a Rollout that names a TrafficRouting and has no
// trafficRoutings of its own the TrafficRouting's objectRef as its
// trafficRoutings, in memory only, so that its steps drive those routes.
// It returns why the Rollout cannot release (the TrafficRouting does not
// exist), or "".
func (r *Reconciler) resolveRoutingRef(ctx context.Context, ro *rolloutsv1beta1.Rollout) (string, error) {
	name := ro.TrafficRoutingRef()
	if name == "" {
		return "", nil
	}
	var target *[]rolloutsv1beta1.TrafficRoutingRef
	switch s := &ro.Spec.Strategy; {
	case s.Canary != nil:
		target = &s.Canary.TrafficRoutings
	case s.BlueGreen != nil:
		target = &s.BlueGreen.TrafficRoutings
	default:
		return "", nil
	}
	if len(*target) > 0 {
		return "", nil // the Rollout's own routes win
	}
	tr := &rolloutsv1alpha1.TrafficRouting{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ro.Namespace, Name: name}, tr)
	switch {
	case apierrors.IsNotFound(err) && !ro.DeletionTimestamp.IsZero():
		return "", nil // gone with the Rollout: nothing left to route
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("trafficRoutingRef: TrafficRouting %s not found", name), nil
	case err != nil:
		return "", fmt.Errorf("reading TrafficRouting %s: %w", name, err)
	}
	for _, e := range tr.Spec.ObjectRef {
		*target = append(*target, e.V1beta1())
	}
	return "", nil
}

// holdRoutingRef puts the finalizer progressing.rollouts.kruise.io/<rollout>
// on the TrafficRouting ro names while ro releases (or gives a release
// back), so that the TrafficRouting leaves the routes to it, and removes
// it otherwise.
func (r *Reconciler) holdRoutingRef(ctx context.Context, ro *rolloutsv1beta1.Rollout, releasing bool) error {
	name := ro.TrafficRoutingRef()
	if name == "" {
		return nil
	}
	tr := &rolloutsv1alpha1.TrafficRouting{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ro.Namespace, Name: name}, tr); err != nil {
		return client.IgnoreNotFound(err)
	}
	fin := rolloutsv1alpha1.ProgressingFinalizerPrefix + ro.Name
	if controllerutil.ContainsFinalizer(tr, fin) == releasing || (releasing && !tr.DeletionTimestamp.IsZero()) {
		return nil
	}
	base := tr.DeepCopy()
	if releasing {
		controllerutil.AddFinalizer(tr, fin)
	} else {
		controllerutil.RemoveFinalizer(tr, fin)
	}
	err := r.Client.Patch(ctx, tr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(rolloutsv1beta1.FieldManager))
	if err = client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("updating the finalizers of TrafficRouting %s: %w", name, err)
	}
	return nil
}

// releasing reports whether ro (after this reconcile) is releasing or
// giving a release back, and so holds its TrafficRouting.
func releasing(ro *rolloutsv1beta1.Rollout, leaving bool) bool {
	if leaving {
		return false
	}
	switch ro.Status.Phase {
	case rolloutsv1beta1.RolloutPhaseProgressing, rolloutsv1beta1.RolloutPhaseTerminating, rolloutsv1beta1.RolloutPhaseDisabling,
		rolloutsv1beta1.RolloutPhaseAborted:
		return true
	}
	return false
}
