package trafficrouting

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/drive"
	"github.com/sluice-dev/sluice/traffic/providers"
)

// owner is the name a TrafficRouting's changes are recorded under (in the
// routes' records), distinct from any Rollout's name so that a Rollout
// releasing through the same routes never takes them for its own.
func owner(tr *rolloutsv1alpha1.TrafficRouting) string {
	return "TrafficRouting/" + tr.Name
}

// entry is the providers of one objectRef entry.
type entry struct {
	target    traffic.Target
	providers []traffic.Provider
}

// entriesOf returns the objectRef entries of tr as trafficRoutings
// entries.
func entriesOf(tr *rolloutsv1alpha1.TrafficRouting) []rolloutsv1beta1.TrafficRoutingRef {
	refs := make([]rolloutsv1beta1.TrafficRoutingRef, 0, len(tr.Spec.ObjectRef))
	for _, e := range tr.Spec.ObjectRef {
		refs = append(refs, e.V1beta1())
	}
	return refs
}

// routesOf builds the providers of every objectRef entry of tr. As in
// OpenKruise, a TrafficRouting routes to the stable Service itself: no
// canary Service is created and the stable one keeps its selector.
func (r *Reconciler) routesOf(tr *rolloutsv1alpha1.TrafficRouting) ([]entry, error) {
	ref := *metav1.NewControllerRef(tr, rolloutsv1alpha1.GroupVersion.WithKind("TrafficRouting"))
	deps := providers.Deps{Client: r.Client, Reader: r.APIReader, Namespace: r.Namespace}
	var out []entry
	for i, e := range entriesOf(tr) {
		t := traffic.Target{Namespace: tr.Namespace, Rollout: owner(tr), Owner: ref, Ref: e, DisableCanaryService: true}
		ps, err := providers.New(deps, t)
		if err != nil {
			return nil, fmt.Errorf("spec.objectRef[%d]: %w", i, err)
		}
		out = append(out, entry{target: t, providers: ps})
	}
	return out, nil
}

// apply carries out act on the routes of tr; it reports true when nothing
// had to change.
func (r *Reconciler) apply(ctx context.Context, tr *rolloutsv1alpha1.TrafficRouting, act action) (bool, error) {
	if act == leave {
		return true, nil
	}
	entries, err := r.routesOf(tr)
	if err != nil {
		return false, err
	}
	s := tr.Spec.Strategy
	var matches []rolloutsv1beta1.HttpRouteMatch
	for _, m := range s.Matches {
		matches = append(matches, rolloutsv1beta1.HttpRouteMatch{Headers: m.Headers})
	}
	all := true
	for _, e := range entries {
		var ok bool
		if act == shift {
			ok, err = drive.Ensure(ctx, e.providers, drive.Desired(e.target, s.Weight, matches, s.RequestHeaderModifier))
		} else {
			ok, err = drive.Finalize(ctx, e.providers)
		}
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}
