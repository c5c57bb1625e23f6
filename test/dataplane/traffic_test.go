package dataplane

import (
	"fmt"
	"maps"
	"math"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// requests is how many requests measure one step's share.
//
// tolerance is how far, in percentage points, the measured canary share may
// be from the step's weight. Traefik's weighted round robin is
// deterministic, so the share is nearly exact; the bound is chosen so that
// it holds even for a proxy that picked each backend at random with the
// step's weight: the share of 400 such draws has a binomial standard
// deviation of sqrt(p(1-p)/400), at most 2.5 points (p = 50%), so 7 points
// is more than 2.8 standard deviations at every step (a random proxy fails
// a step less than once in 200 runs), while a proxy that ignored the
// weights (0%, 100%, or an even 50% split at the 20% step) fails by far.
const (
	requests  = 400
	tolerance = 7.0
)

// measure sends requests through the proxy to the routes of ns with the
// given headers, first until the answers come from the expected revisions
// in about the expected share (the proxy and EndpointSlices converge within
// seconds), then once more, returning the counts by image of that last,
// asserted sample. Every answer must come from a pod running v1 or v2.
func measure(t *testing.T, ns string, headers map[string]string, wantCanaryPct, tol float64) map[string]int {
	t.Helper()
	var counts map[string]int
	check := func(n int) (bool, string) {
		counts = suite.proxy.send(ctxFor(t), hostOf(ns), n, headers)
		pct := 100 * float64(counts[v2]) / float64(n)
		ok := counts[v1]+counts[v2] == n && math.Abs(pct-wantCanaryPct) <= tol
		return ok, fmt.Sprintf("%d requests with headers %v: %v, canary %.1f%%, want %.0f%% ± %.0f", n, headers, counts, pct, wantCanaryPct, tol)
	}
	eventually(t, fmt.Sprintf("proxy sending %.0f%% to the canary", wantCanaryPct), func() (bool, string) { return check(100) })
	ok, seen := check(requests)
	if !ok {
		t.Fatalf("measured: %s", seen)
	}
	t.Logf("measured: %s", seen)
	return maps.Clone(counts)
}

// assertPods checks the live pods of app web by image.
func assertPods(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	eventually(t, fmt.Sprintf("pods %v", want), func() (bool, string) {
		got := podImages(t, ns, "web")
		return maps.Equal(got, want), fmt.Sprint(got)
	})
}

// release sets up a scenario: Gateway "public", a Deployment web of 4 pods
// on v1, the Service web, the HTTPRoute web to it, and a canary-style
// Rollout of web through the route with steps. Before any release, every
// request reaches v1.
func release(t *testing.T, steps ...rolloutsv1beta1.CanaryStep) string {
	t.Helper()
	ns := newNamespace(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("proxy log:\n%s", suite.proxy.logTail(80))
		}
	})
	gateway(t, ns)
	deployment(t, ns, "web", 4, v1)
	service(t, ns, "web")
	httpRoute(t, ns, "web", "web")
	rollout(t, ns, "web", steps...)
	measure(t, ns, nil, 0, 0)
	return ns
}

// Given a Deployment of 4 pods on v1 behind a Service, an HTTPRoute on a
// Gateway served by a real proxy, and a canary Rollout routing through the
// route: 1 pod with 20% / 1 pod with header x-user=beta / 50% of pods with
// 50% / 100%
// When v2 is released and every step is approved
// Then 400 requests through the proxy split 20% ± 7 to v2 at the first
// step; with the header all go to v2 and without it none at the second;
// 50% ± 7 at the third; and after completion every request reaches v2.
func TestDataPlane_canarySteps_sendTheStepsShareToTheCanary(t *testing.T) {
	ns := release(t, step("1", "20%"), step("1", "", headerMatch("x-user", "beta")), step("50%", "50%"), step("100%", "100%"))

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, ns, map[string]int{v1: 4, v2: 1})
	measure(t, ns, nil, 20, tolerance)

	approve(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, ns, map[string]int{v1: 4, v2: 1})
	measure(t, ns, map[string]string{"x-user": "beta"}, 100, 0)
	measure(t, ns, map[string]string{"x-user": "alpha"}, 0, 0)
	measure(t, ns, nil, 0, 0)

	approve(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, ns, map[string]int{v1: 4, v2: 2})
	measure(t, ns, nil, 50, tolerance)

	approve(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertPods(t, ns, map[string]int{v2: 4})
	measure(t, ns, nil, 100, 0)
	measure(t, ns, map[string]string{"x-user": "beta"}, 100, 0)
}

// Given the same setup with steps 20% / 50% / 100%
// When v2 is released to the 50% step and the image is then set back to v1
// Then the canary gets 20% ± 7 and 50% ± 7 of 400 requests at the first two
// steps, and after the rollback every request reaches v1 again.
func TestDataPlane_rollbackMidRelease_sendsEverythingToStable(t *testing.T) {
	ns := release(t, step("1", "20%"), step("50%", "50%"), step("100%", "100%"))

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, ns, map[string]int{v1: 4, v2: 1})
	measure(t, ns, nil, 20, tolerance)

	approve(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, ns, map[string]int{v1: 4, v2: 2})
	measure(t, ns, nil, 50, tolerance)

	setImage(t, ns, "web", v1)
	waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		for _, c := range r.Status.Conditions {
			if c.Type == rolloutsv1beta1.RolloutConditionSucceeded {
				return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c.Status == "False"
			}
		}
		return false
	})
	waitDeploymentComplete(t, ns, "web", v1)
	assertPods(t, ns, map[string]int{v1: 4})
	measure(t, ns, nil, 0, 0)
}
