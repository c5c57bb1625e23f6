package trafficrouting

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/providers"
)

// defaultGrace is the wait after a change of the routes when the entry
// gives none, as for a Rollout.
const defaultGrace = 3 * time.Second

// owner is the name a TrafficRouting's changes are recorded under (in the
// routes' records), distinct from any Rollout's name so that a Rollout
// releasing through the same routes never takes them for its own.
func owner(tr *rolloutsv1alpha1.TrafficRouting) string {
	return "TrafficRouting/" + tr.Name
}

// route is one provider of an objectRef entry.
type route struct {
	target   traffic.Target
	provider traffic.Provider
}

// routesOf builds the providers of every objectRef entry of tr. As in
// OpenKruise, a TrafficRouting routes to the stable Service itself: no
// canary Service is created and the stable one keeps its selector.
func (r *Reconciler) routesOf(tr *rolloutsv1alpha1.TrafficRouting) ([]route, error) {
	ref := *metav1.NewControllerRef(tr, rolloutsv1alpha1.GroupVersion.WithKind("TrafficRouting"))
	var out []route
	for i, entry := range tr.Spec.ObjectRef {
		t := traffic.Target{Namespace: tr.Namespace, Rollout: owner(tr), Owner: ref, Ref: entry.V1beta1(), DisableCanaryService: true}
		ps, err := providers.New(r.Client, r.APIReader, t)
		if err != nil {
			return nil, fmt.Errorf("spec.objectRef[%d]: %w", i, err)
		}
		for _, p := range ps {
			out = append(out, route{target: t, provider: p})
		}
	}
	return out, nil
}

// desiredOf is what the routes of t carry for the strategy s.
func desiredOf(t traffic.Target, s rolloutsv1alpha1.TrafficRoutingStrategy) traffic.Desired {
	d := traffic.Desired{
		StableService: t.Ref.Service, CanaryService: traffic.CanaryServiceOf(t),
		Weight: s.Weight, RequestHeaderModifier: s.RequestHeaderModifier,
	}
	for _, m := range s.Matches {
		d.Matches = append(d.Matches, rolloutsv1beta1.HttpRouteMatch{Headers: m.Headers})
	}
	return d
}

// apply carries out act on the routes of tr; it reports true when nothing
// had to change.
func (r *Reconciler) apply(ctx context.Context, tr *rolloutsv1alpha1.TrafficRouting, act action) (bool, error) {
	if act == leave {
		return true, nil
	}
	routes, err := r.routesOf(tr)
	if err != nil {
		return false, err
	}
	all := true
	for _, rt := range routes {
		var ok bool
		if act == shift {
			ok, err = rt.provider.EnsureRoutes(ctx, desiredOf(rt.target, tr.Spec.Strategy))
		} else {
			ok, err = rt.provider.Finalize(ctx)
		}
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// graceOf is the longest grace period of tr's entries.
func graceOf(tr *rolloutsv1alpha1.TrafficRouting) time.Duration {
	grace := time.Duration(0)
	if len(tr.Spec.ObjectRef) == 0 {
		return defaultGrace
	}
	for _, e := range tr.Spec.ObjectRef {
		g := defaultGrace
		if e.GracePeriodSeconds > 0 {
			g = time.Duration(e.GracePeriodSeconds) * time.Second
		}
		grace = max(grace, g)
	}
	return grace
}
