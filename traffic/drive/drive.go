// Package drive drives the providers of trafficRoutings entries, for the
// Rollout and the TrafficRouting controllers alike: it makes an entry's
// routes carry a step's traffic or gives them back, and says how long to
// wait after a change before looking again (the entries' grace period).
package drive

import (
	"context"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

// DefaultGrace is the wait after a traffic change when a trafficRoutings
// entry gives none (gracePeriodSeconds 0 or unset), as in OpenKruise.
const DefaultGrace = 3 * time.Second

// Grace is the longest grace period of refs: an entry without one waits
// DefaultGrace, and so does an empty list.
func Grace(refs []rolloutsv1beta1.TrafficRoutingRef) time.Duration {
	if len(refs) == 0 {
		return DefaultGrace
	}
	var grace time.Duration
	for _, ref := range refs {
		g := DefaultGrace
		if ref.GracePeriodSeconds > 0 {
			g = time.Duration(ref.GracePeriodSeconds) * time.Second
		}
		grace = max(grace, g)
	}
	return grace
}

// Desired is what the routes of the entry t carry for a step's traffic:
// the share weight, the requests matches select and the header changes
// modifier makes, sent to the canary Service of t.
func Desired(t traffic.Target, weight *int32, matches []rolloutsv1beta1.HttpRouteMatch, modifier *rolloutsv1beta1.HTTPHeaderFilter) traffic.Desired {
	return traffic.Desired{
		StableService:         t.Ref.Service,
		CanaryService:         traffic.CanaryServiceOf(t),
		Weight:                weight,
		Matches:               matches,
		RequestHeaderModifier: modifier,
	}
}

// Ensure makes every provider of ps carry d, in order; it stops at the
// first error. It reports true when none had to change.
func Ensure(ctx context.Context, ps []traffic.Provider, d traffic.Desired) (bool, error) {
	return each(ps, func(p traffic.Provider) (bool, error) { return p.EnsureRoutes(ctx, d) })
}

// Finalize gives every provider of ps back its routes, in order; it stops
// at the first error. It reports true once nothing is left to restore.
func Finalize(ctx context.Context, ps []traffic.Provider) (bool, error) {
	return each(ps, func(p traffic.Provider) (bool, error) { return p.Finalize(ctx) })
}

// each runs do on every provider of ps and reports whether all reported
// true.
func each(ps []traffic.Provider, do func(traffic.Provider) (bool, error)) (bool, error) {
	all := true
	for _, p := range ps {
		ok, err := do(p)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}
