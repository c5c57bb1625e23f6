package gitopsgitea

import (
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsstory"
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
	gitopsstory.AfterPause(t, paused)
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	second := stage.WaitStep(t, ns, 2)
	got := stage.Approvals(t, ns)
	if len(got) != 1 || got[0].Step != 1 || got[0].By != "alice" || got[0].Via != "gitea-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitea-label", got)
	}
	waitStatus(t, ns, repo, merge, "pending", "step 2/3 paused: add label sluice/approve to continue")

	// Bob opened the pull request: his promote-full label is refused
	// (separation of duties) and the release stays at step 2.
	gitopsstory.AfterPause(t, second)
	if err := repo.AddLabels(ctx, suite.bob, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	stage.WaitRefused(t, ns, "SelfApproval", "bob opened pull request #")
	if ro := stage.Rollout(t, ns); ro.Status.CurrentStepIndex != 2 || len(stage.Approvals(t, ns)) != 1 {
		t.Fatalf("step %d with approvals %+v after the author's label, want step 2 and one", ro.Status.CurrentStepIndex, stage.Approvals(t, ns))
	}

	// Alice's promote-full finishes the release.
	if err := repo.RemoveLabel(ctx, suite.alice, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	stage.WaitReleased(t, ns)
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
	stage.WaitGateReady(t, ns)
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
