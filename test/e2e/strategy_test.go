package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a release of v2 paused at step 1 (1 of 10 pods) of a Deployment
// When spec.strategy.paused is set to true and the step is approved the
// way kubectl-kruise does it
// Then the release stays at step 1, says it is paused by
// spec.strategy.paused, and no pod changes; once spec.strategy.paused is
// back to false the approval applies and the release goes on to step 2
// (5 of 10) and, approved again, completes.
func TestRollout_strategyPaused_approvalWaitsForResume(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertImages(t, ns, "step 1", 9, 1)

	setStrategyPaused(t, ns, "web", true)
	waitRollout(t, ns, "web", "frozen by spec.strategy.paused", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionProgressing)
		return c != nil && c.Reason == rolloutsv1beta1.ProgressingReasonPaused && strings.Contains(r.Status.Message, "spec.strategy.paused")
	})
	approveByStatus(t, ns, "web")
	consistently(t, "the paused release stays at step 1 with its pods", 3*time.Second, func() (bool, string) {
		r := getRollout(t, ns, "web")
		c := condition(r, rolloutsv1beta1.RolloutConditionProgressing)
		pods := podImages(t, ns, "web")
		ok := r.Status.CurrentStepIndex == 1 && c != nil && c.Reason == rolloutsv1beta1.ProgressingReasonPaused &&
			strings.Contains(r.Status.Message, "Paused at step 1/3 (spec.strategy.paused)") &&
			pods[v1] == 9 && pods[v2] == 1 && len(pods) == 2
		return ok, fmt.Sprintf("pods by image %v; status %s", pods, describe(r))
	})
	assertHeld(t, ns, "web")

	setStrategyPaused(t, ns, "web", false)
	// The approval given while paused was kept: the release goes on.
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertImages(t, ns, "step 2", 5, 5)
	assertHeld(t, ns, "web")
	if c := condition(ro, rolloutsv1beta1.RolloutConditionProgressing); c == nil || c.Reason != rolloutsv1beta1.ProgressingReasonInRolling {
		t.Fatalf("step 2 after resuming: Progressing %+v", c)
	}

	approveByStatus(t, ns, "web")
	waitCompleted(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
}

// Given a release of v2 paused at step 2 of 1 / 50% / 100% (5 of 10 pods
// on v2)
// When the steps are changed to 1 / 30% / 60% / 100%
// Then the release continues at the first step that does not release
// fewer pods than already run v2: step 3 (60%, 6 ≥ 5), which pauses with
// 6 pods on v2 (none went back); approved, it completes.
func TestRollout_stepsChangedMidRelease_continuesAtTheMatchingStep(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertImages(t, ns, "step 1", 9, 1)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertImages(t, ns, "step 2", 5, 5)

	ro := getRollout(t, ns, "web")
	ro.Spec.Strategy.Canary.Steps = []rolloutsv1beta1.CanaryStep{step("1", nil), step("30%", nil), step("60%", nil), step("100%", nil)}
	if err := suite.c.Update(ctxFor(t), ro, client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("changing the steps: %v", err)
	}
	ro = waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	if cs := ro.Status.CanaryStatus; cs.NextStepIndex != 4 || cs.CanaryReplicas != 6 || cs.CanaryReadyReplicas != 6 {
		t.Fatalf("step 3 after the steps changed: %s", describe(ro))
	}
	assertImages(t, ns, "step 3 of the new steps", 4, 6)
	assertHeld(t, ns, "web")

	approveByStatus(t, ns, "web")
	waitCompleted(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
}

// assertImages checks how many pods of the Deployment web run v1 and v2.
func assertImages(t *testing.T, ns, at string, old, updated int) {
	t.Helper()
	if got := podImages(t, ns, "web"); got[v1] != old || got[v2] != updated || len(got) > 2 {
		t.Fatalf("%s: pods by image %v, want %d on v1 and %d on v2", at, got, old, updated)
	}
}

// setStrategyPaused sets spec.strategy.paused of a Rollout, as
// kubectl-kruise rollout pause / resume do.
func setStrategyPaused(t *testing.T, ns, name string, paused bool) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	ro.SetNamespace(ns)
	ro.SetName(name)
	patch := fmt.Appendf(nil, `{"spec":{"strategy":{"paused":%t}}}`, paused)
	if err := suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("setting spec.strategy.paused to %t: %v", paused, err)
	}
}

// consistently checks cond every 100ms for d, failing the test as soon as
// it does not hold: what must not happen within d.
func consistently(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctxFor(t), 100*time.Millisecond, d, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return !ok, nil
	})
	if err == nil {
		t.Fatalf("%s: no longer true; saw %s", what, last)
	}
}
