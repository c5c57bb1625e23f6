package gitopsgitea

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story: a team on Gitea. Flux applies the branch from Gitea; the GitGate
// names the repository in spec.scm (provider gitea). Bob opens a pull
// request bumping checkout to v2 and Alice merges it: Flux applies the
// merge, the release pauses at step 1 and the merge commit shows a pending
// status saying so. Alice's sluice/approve label on the pull request
// approves step 1 (recorded as hers, via the label). Bob's
// sluice/promote-full is refused: he opened the pull request, and its author
// cannot approve its release. Alice's promotes the release to the end, and
// the merge commit's status turns success.
func TestGitGate_onGitea_labelsApproveAndStatusesLandOnTheMerge(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea", labels: []string{"sluice/approve", "sluice/promote-full", "sluice/rollback"}})
	ns, repo, pr, merge, paused := s.ns, s.repo, s.pr, s.merge, s.paused

	// Alice's label approves step 1. A label counts only when added after
	// the pause (both times in whole seconds).
	afterPause(t, paused)
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	second := waitStep(t, ns, 2)
	got := approvals(t, ns)
	if len(got) != 1 || got[0].Step != 1 || got[0].By != "alice" || got[0].Via != "gitea-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitea-label", got)
	}
	waitStatus(t, ns, repo, merge, "pending", "step 2/3 paused: add label sluice/approve to continue")

	// Bob opened the pull request: his promote-full label is refused
	// (separation of duties) and the release stays at step 2.
	afterPause(t, second)
	if err := repo.AddLabels(ctx, suite.bob, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, ns, "SelfApproval", "bob opened pull request #")
	if ro := rollout(t, ns); ro.Status.CurrentStepIndex != 2 || len(approvals(t, ns)) != 1 {
		t.Fatalf("step %d with approvals %+v after the author's label, want step 2 and one", ro.Status.CurrentStepIndex, approvals(t, ns))
	}

	// Alice's promote-full finishes the release.
	if err := repo.RemoveLabel(ctx, suite.alice, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "Healthy on v2", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitStatus(t, ns, repo, merge, "success", "released: 3/3 steps done")
}

// createGateWith creates the gate of repo in ns, changed by mutate, and
// waits until it is Ready.
func createGateWith(t *testing.T, ns string, repo *giteatest.Repo, mutate func(*gitopsv1alpha1.GitGate)) {
	t.Helper()
	ctx := poll.Context(t)
	if err := suite.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitea"},
		StringData: map[string]string{"token": suite.sluice.Token}}); err != nil {
		t.Fatal(err)
	}
	gate := &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git: gitopsv1alpha1.GitSource{URL: repo.CloneURL, Branch: "main"},
			SCM: &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitea, Repository: repo.FullName(), APIURL: suite.gitea.URL,
				SecretRef: meta.LocalObjectReference{Name: "gitea"}},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Interval:        metav1.Duration{Duration: time.Second},
		},
	}
	if mutate != nil {
		mutate(gate)
	}
	if err := suite.c.Create(ctx, gate); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			g := &gitopsv1alpha1.GitGate{}
			if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "shop"}, g); err == nil {
				b, _ := json.Marshal(g.Status)
				t.Logf("GitGate status: %s", b)
			}
		}
	})
	poll.Until(t, "the gate Ready with one Rollout", func() (bool, string) {
		g := &gitopsv1alpha1.GitGate{}
		if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, g); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(g.Status)
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) && g.Status.BoundRollouts == 1, string(b)
	})
}

// waitRefused waits until the gate refuses an intent for reason, its
// message containing text.
func waitRefused(t *testing.T, ns, reason, text string) {
	t.Helper()
	poll.Until(t, "the gate refusing "+reason, func() (bool, string) {
		g := &gitopsv1alpha1.GitGate{}
		if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "shop"}, g); err != nil {
			return false, err.Error()
		}
		for _, b := range g.Status.Rollouts {
			for _, r := range b.Refused {
				if r.Reason == reason && strings.Contains(r.Message, text) {
					return true, ""
				}
			}
		}
		out, _ := json.Marshal(g.Status.Rollouts)
		return false, string(out)
	})
}

func rollout(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "checkout"}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

func waitRollout(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	var ro *rolloutsv1beta1.Rollout
	poll.Until(t, "rollout "+what, func() (bool, string) {
		ro = rollout(t, ns)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

func waitStep(t *testing.T, ns string, step int32) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, fmt.Sprintf("paused at step %d", step), func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// afterPause waits until the clock is a whole second past the pause of ro's
// step, so that a label added now is newer than the pause.
func afterPause(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	at := ro.Status.CanaryStatus.LastUpdateTime
	if at == nil {
		t.Fatalf("step %d paused without a time in the status", ro.Status.CurrentStepIndex)
	}
	poll.Until(t, "a second past the pause", func() (bool, string) {
		return time.Now().Truncate(time.Second).After(at.Time), "paused at " + at.String()
	})
}

func approvals(t *testing.T, ns string) []approval.Approval {
	t.Helper()
	records, err := approval.Records(rollout(t, ns).Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// waitStatus waits until the commit sha of repo shows the Rollout's status
// in state with description, as Gitea reports it.
func waitStatus(t *testing.T, ns string, repo *giteatest.Repo, sha, state, description string) {
	t.Helper()
	api, err := suite.alice.API(poll.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "sluice/" + ns + "/checkout"
	poll.Until(t, fmt.Sprintf("status %s %q on %s", state, description, sha[:12]), func() (bool, string) {
		// The combined status holds the latest status of each context.
		combined, _, err := api.GetCombinedStatus(repo.Owner, repo.Name, sha)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range combined.Statuses {
			if s.Context == want {
				return string(s.State) == state && s.Description == description, fmt.Sprintf("%s %q", s.State, s.Description)
			}
		}
		return false, "no status"
	})
}
