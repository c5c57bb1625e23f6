package gitopsgitea

import (
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story: Gitea's webhook wakes the gate. The gate reads its branch only
// every 10 minutes; the repository's webhook (type gitea, signed with the
// gate's webhookSecretRef) points at sluice's /hook/gitea. Alice's approval
// label on the merged pull request moves the release on within the test's
// deadline (far less than the interval): the delivery, checked against the
// secret, woke the gate.
func TestGitGate_onGitea_webhookDeliveryWakesTheGate(t *testing.T) {
	ctx := poll.Context(t)
	ns := "gitea-hook-" + rand.String(6)
	if err := suite.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	repo, err := suite.gitea.CreateRepo(ctx, suite.alice, suite.org.Name, "shop-"+rand.String(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := collaborators(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if err := repo.EnsureLabels(ctx, suite.alice, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	const secret = "gitea-webhook-secret"
	if err := suite.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"}, StringData: map[string]string{"token": secret}}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateWebhook(ctx, suite.alice, giteatest.Webhook{URL: suite.hookURL, Secret: secret,
		Events: []string{"push", "pull_request", "pull_request_label", "pull_request_sync"}}); err != nil {
		t.Fatal(err)
	}
	alice, err := repo.Clone(ctx, suite.alice)
	if err != nil {
		t.Fatal(err)
	}
	first, err := alice.CommitAndPush(ctx, "main", giteatest.Change{Message: "Add checkout", Write: map[string]string{
		"apps/checkout.yaml": gitopsworld.DeploymentYAML("v1"), "apps/rollout.yaml": gitopsworld.RolloutYAML("Deployment"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.CreateGitRepository(ctx, fluxGitRepository(ns, repo)); err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.CreateKustomization(ctx, fluxKustomization(ns)); err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.WaitApplied(ctx, ns, "apps", first); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "Healthy on v1", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	createGateWith(t, ns, repo, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Interval = metav1.Duration{Duration: 10 * time.Minute}
		g.Spec.WebhookSecretRef = &meta.LocalObjectReference{Name: "hook"}
	})

	bob, err := repo.Clone(ctx, suite.bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.CommitAndPush(ctx, "bump", giteatest.Change{Message: "Bump checkout to v2", Write: map[string]string{"apps/checkout.yaml": gitopsworld.DeploymentYAML("v2")}}); err != nil {
		t.Fatal(err)
	}
	pr, err := repo.OpenPullRequest(ctx, suite.bob, "bump", "main", "Bump checkout to v2")
	if err != nil {
		t.Fatal(err)
	}
	merged, err := repo.MergePullRequest(ctx, suite.alice, pr.Index, sdk.MergeStyleMerge)
	if err != nil {
		t.Fatal(err)
	}
	merge := *merged.MergedCommitID
	if err := suite.flux.WaitApplied(ctx, ns, "apps", merge); err != nil {
		t.Fatal(err)
	}
	paused := waitStep(t, ns, 1)
	waitStatus(t, ns, repo, merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	afterPause(t, paused)
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	waitStep(t, ns, 2)
	if got := approvals(t, ns); len(got) != 1 || got[0].By != "alice" || got[0].Via != "gitea-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitea-label", got)
	}
}
