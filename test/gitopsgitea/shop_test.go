package gitopsgitea

import (
	"context"
	"testing"

	sdk "code.gitea.io/sdk/gitea"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/poll"
)

// shop is the world a story starts from: a namespace that Flux applies
// the main branch of a Gitea repository into (checkout, 4 pods, and its
// Rollout of 3 steps), the repository's GitGate, and the release of Bob's
// pull request bumping checkout to v2, merged by Alice, applied by Flux and
// paused at step 1 with the merge commit's status pending.
type shop struct {
	ns   string
	repo *giteatest.Repo
	// alice is Alice's checkout of the repository.
	alice *giteatest.Checkout
	// pr is Bob's pull request; merge its merge commit.
	pr    *sdk.PullRequest
	merge string
	// paused is the Rollout as it paused at step 1.
	paused *rolloutsv1beta1.Rollout
}

// shopOptions change how a story's shop is set up.
type shopOptions struct {
	// prefix of the namespace.
	prefix string
	// labels the repository has (sluice/approve when none).
	labels []string
	// prepare runs after the repository is made, before its first commit
	// (to add a webhook, say).
	prepare func(ctx context.Context, ns string, repo *giteatest.Repo) error
	// gate changes the GitGate before it is created.
	gate func(*gitopsv1alpha1.GitGate)
	// pending is the status the merge commit shows once the release paused
	// at step 1 ("step 1/3 paused: add label sluice/approve to continue"
	// when empty).
	pending string
}

// openShop sets up o's shop and returns it with the release paused at
// step 1.
func openShop(t *testing.T, o shopOptions) *shop {
	t.Helper()
	ctx := poll.Context(t)
	s := &shop{ns: o.prefix + "-" + rand.String(6)}
	if err := suite.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}); err != nil {
		t.Fatal(err)
	}
	repo, err := suite.gitea.CreateRepo(ctx, suite.alice, suite.org.Name, "shop-"+rand.String(4))
	if err != nil {
		t.Fatal(err)
	}
	s.repo = repo
	t.Cleanup(func() { stage.Describe(t, s.ns) })
	if err := collaborators(ctx, repo); err != nil {
		t.Fatal(err)
	}
	labels := o.labels
	if len(labels) == 0 {
		labels = []string{"sluice/approve"}
	}
	if err := repo.EnsureLabels(ctx, suite.alice, labels...); err != nil {
		t.Fatal(err)
	}
	if o.prepare != nil {
		if err := o.prepare(ctx, s.ns, repo); err != nil {
			t.Fatal(err)
		}
	}
	if s.alice, err = repo.Clone(ctx, suite.alice); err != nil {
		t.Fatal(err)
	}
	first, err := s.alice.CommitAndPush(ctx, "main", giteatest.Change{Message: "Add checkout", Write: map[string]string{
		"apps/checkout.yaml": gitopsworld.DeploymentYAML("v1"), "apps/rollout.yaml": gitopsworld.RolloutYAML("Deployment"),
	}})
	if err != nil {
		t.Fatal(err)
	}

	// Flux applies the branch from Gitea; the gate names the repository.
	stage.FluxApplies(t, s.ns, repo.CloneURL, "main", first)
	stage.WaitRollout(t, s.ns, "Healthy on v1", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	createGateWith(t, s.ns, repo, o.gate)

	// Bob's pull request, merged by Alice.
	bob, err := repo.Clone(ctx, suite.bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.CommitAndPush(ctx, "bump", giteatest.Change{Message: "Bump checkout to v2", Write: map[string]string{"apps/checkout.yaml": gitopsworld.DeploymentYAML("v2")}}); err != nil {
		t.Fatal(err)
	}
	if s.pr, err = repo.OpenPullRequest(ctx, suite.bob, "bump", "main", "Bump checkout to v2"); err != nil {
		t.Fatal(err)
	}
	merged, err := repo.MergePullRequest(ctx, suite.alice, s.pr.Index, sdk.MergeStyleMerge)
	if err != nil {
		t.Fatal(err)
	}
	s.merge = *merged.MergedCommitID
	if err := suite.flux.WaitApplied(ctx, s.ns, "apps", s.merge); err != nil {
		t.Fatal(err)
	}
	s.paused = stage.WaitStep(t, s.ns, 1)
	pending := o.pending
	if pending == "" {
		pending = "step 1/3 paused: add label sluice/approve to continue"
	}
	waitStatus(t, s.ns, repo, s.merge, "pending", pending)
	return s
}
