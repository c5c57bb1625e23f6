package gitops

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// newHookedWorld is newWorld with the gate polling hourly and the webhook
// secret secret, so that only deliveries and the Rollout's changes wake it,
// and with "reviewer" a writer of the repository.
func newHookedWorld(t *testing.T, secret []byte) *world {
	t.Helper()
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Interval = metav1.Duration{Duration: time.Hour}
		g.Spec.WebhookSecretRef = &meta.LocalObjectReference{Name: "hook"}
	})
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "hook"}, Data: map[string][]byte{"token": secret}})
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	return w
}

// Stories 1 and 5 through the webhook: with a poll of an hour, a label
// delivery signed with the gate's secret starts step 2 within seconds; a
// delivery with a bad signature is refused and triggers nothing; a replayed
// delivery is ignored.
func TestGitGate_webhookDelivery_triggersAndForgeriesDoNot(t *testing.T) {
	secret := []byte("hook-secret")
	w := newHookedWorld(t, secret)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge) // the Rollout's changes wake the gate up, no poll needed
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	ctx := context.Background()

	// When the label is added and a delivery forged with another secret
	// announces it.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	forged, err := w.gh.DeliverLabel(ctx, suite.hookURL, []byte("wrong"), ghRepo, pr, "sluice/approve", "reviewer", true)
	if err != nil {
		t.Fatal(err)
	}
	// Then it is refused, and nothing moves (the next poll is an hour away).
	if forged.Status != http.StatusUnauthorized {
		t.Fatalf("forged delivery answered %d, want 401", forged.Status)
	}
	for range 3 {
		w.afterSecond()
		if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 {
			t.Fatalf("step %d after a forged delivery, want 1", ro.Status.CurrentStepIndex)
		}
	}

	// When GitHub delivers it signed with the gate's secret.
	d, err := w.gh.DeliverLabel(ctx, suite.hookURL, secret, ghRepo, pr, "sluice/approve", "reviewer", true)
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("delivery answered %d, %v; want 200", d.Status, err)
	}
	// Then step 2 starts within seconds, approved by the reviewer.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")
	if got := w.approvals(); len(got) != 1 || got[0].By != "reviewer" || got[0].Via != "github-label" {
		t.Fatalf("approvals = %+v, want one by reviewer via github-label", got)
	}

	// When the same delivery is replayed.
	again, err := w.gh.Redeliver(ctx, suite.hookURL, secret, d)
	if err != nil {
		t.Fatal(err)
	}
	// Then it is recognised, and the stale label still approves nothing.
	if again.Status != http.StatusOK {
		t.Fatalf("replayed delivery answered %d, want 200 (duplicate)", again.Status)
	}
	w.waitEvent("Rollout", "checkout", "LabelPredatesPause", "before step 2/3 paused")
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 2 || len(w.approvals()) != 1 {
		t.Fatalf("step %d with %d approvals after the replay, want step 2 with 1", ro.Status.CurrentStepIndex, len(w.approvals()))
	}
}

// Story 6: GitHub answers 403 with x-ratelimit-remaining 0, 429 with
// retry-after, and 500: the Rollout keeps to its own gates, the statuses
// come once the limits reset, and no state is posted twice.
func TestGitGate_githubRateLimitsAndErrors_neverBlockAndNeverPostTwice(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	w.suspendFlux()
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})

	// Given GitHub's hourly budget spent for the next 4 seconds, when Flux
	// applies the merge.
	reset := time.Now().Add(4 * time.Second)
	w.gh.ExhaustPrimary(reset)
	w.resumeFlux()
	w.waitApplied(merge)

	// Then the release goes on to its own pause at step 1 regardless.
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	if time.Now().Before(reset) && w.status(merge).State != "" {
		t.Fatalf("a status was posted while rate limited: %+v", w.status(merge))
	}
	// And the pending status comes once the limit resets.
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// Given a secondary limit (429 with retry-after) and then server errors
	// on status posts.
	w.gh.LimitSecondary(3 * time.Second)
	w.gh.FailNext("repos/create-commit-status", http.StatusInternalServerError, 2)
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/promote-full", "reviewer")

	// Then the approval still lands and the release completes; the success
	// status is posted once the limit is over.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")

	// And GitHub did refuse requests each way.
	refused := map[int]int{}
	for _, r := range w.gh.Requests() {
		refused[r.Status]++
	}
	for _, code := range []int{http.StatusForbidden, http.StatusTooManyRequests, http.StatusInternalServerError} {
		if refused[code] == 0 {
			t.Errorf("no request was answered %d: %v", code, refused)
		}
	}

	// And no state was posted twice.
	seen := map[string]int{}
	for _, s := range w.gh.Statuses(ghRepo, merge) {
		seen[s.State+" "+s.Description]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("status %q posted %d times", k, n)
		}
	}
}
