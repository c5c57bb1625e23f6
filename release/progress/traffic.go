package progress

import (
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Routed reports whether ro splits requests with weights on routes (a
// traffic routing), rather than over the ready pods of both revisions.
func Routed(ro *rolloutsv1beta1.Rollout) bool {
	return len(ro.Spec.Strategy.TrafficRoutings()) > 0
}

// Weight is the share of requests, 0 to 100, that ro's routes send to the
// new revision at its current step; false when they set none: ro routes no
// traffic, no release is in progress, or the step gives no weight. The web
// view and the pull request's comment both read the split here.
func Weight(ro *rolloutsv1beta1.Rollout) (int, bool) {
	p, ok := Of(ro)
	steps := ro.Spec.Strategy.Steps()
	idx := p.Common.CurrentStepIndex
	if !ok || !Routed(ro) || !InRelease(ro) || idx < 1 || int(idx) > len(steps) || steps[idx-1].Traffic == nil {
		return 0, false
	}
	n, ok := rolloutsv1beta1.Percent(*steps[idx-1].Traffic)
	if !ok || n < 0 || n > 100 {
		return 0, false
	}
	return n, true
}
