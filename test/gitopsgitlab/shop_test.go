package gitopsgitlab

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	gitlab "gitlab.com/gitlab-org/api/client-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/gitlabfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/poll"
)

// The project and the people of every story, on its fake GitLab:
//
//   - alice maintains the group acme and merges;
//   - bob, a developer, opens merge requests;
//   - carol is a reporter: she may label merge requests but not push;
//   - dave, a developer, reviews and approves releases;
//   - sluice-bot is the user whose token the GitGate names, a developer
//     (the role docs/gitops-gitlab.md asks for).
const (
	project = "acme/shop"
	botUser = "sluice-bot"
)

// shop is the world a story starts from: a namespace that Flux applies a
// branch of a Git repository into (checkout, 4 pods, and its Rollout of 3
// steps), the repository mirrored on the story's fake GitLab as project
// acme/shop, the project's GitGate, and the release of Bob's merge request
// bumping checkout to v2, applied by Flux and paused at step 1 with the
// released commit's status running (GitLab's state of a job in progress).
type shop struct {
	ns string
	gl *gitlabfake.Server
	// project is the repository in Git and on GitLab.
	project gitopsworld.GitLabProject
	// mr is Bob's merge request.
	mr gitopsworld.MergeRequest
	// released is the commit being released: Alice's merge of mr, or, when
	// the team deploys before merging, the head of mr's branch.
	released string
	// paused is the Rollout as it paused at step 1.
	paused *rolloutsv1beta1.Rollout
}

// shopOptions change how a story's shop is set up.
type shopOptions struct {
	// prefix of the namespace.
	prefix string
	// prepare runs once Flux applied the first commit, before the gate is
	// created and Bob's merge request opened (to add webhooks, say).
	prepare func(ctx context.Context, ns string, gl *gitlabfake.Server) error
	// gate changes the GitGate before it is created.
	gate func(*gitopsv1alpha1.GitGate)
	// paused is the description of the status the released commit shows
	// once the release paused at step 1 ("step 1/3 paused: add label
	// sluice/approve to continue" when empty).
	paused string
	// deployBeforeMerge has Flux (and the gate) follow Bob's branch "bump"
	// instead of main: the release is of the merge request's head, and the
	// merge request stays open (as in a branch-deploy flow, where a change
	// is released before it is merged).
	deployBeforeMerge bool
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
	t.Cleanup(func() {
		if !t.Failed() { // stops the gate, which would call the closed fake
			_ = suite.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})
		}
	})
	t.Cleanup(func() { stage.Describe(t, s.ns) })
	s.gl = gitlabfake.New(t)
	t.Cleanup(s.gl.Close)
	t.Cleanup(func() { assertNoRefusedStatus(t, s.gl) })
	for _, u := range []string{"alice", "bob", "carol", "dave", botUser} {
		s.gl.AddUser(u)
	}
	s.gl.CreateProject(project, "main", map[string]string{"README.md": "shop\n"}, "alice")
	for user, level := range map[string]gitlab.AccessLevelValue{
		"alice": gitlab.MaintainerPermissions, "bob": gitlab.DeveloperPermissions, "carol": gitlab.ReporterPermissions,
		"dave": gitlab.DeveloperPermissions, botUser: gitlab.DeveloperPermissions,
	} {
		s.gl.AddGroupMember("acme", user, level)
	}
	repo, err := suite.git.CreateRepo(s.ns+".git", "main")
	if err != nil {
		t.Fatal(err)
	}
	s.project = gitopsworld.GitLabProject{Git: repo, GitLab: s.gl, Path: project}
	first, err := s.project.Commit("main", "Add checkout", "alice", map[string]string{
		"apps/checkout.yaml": gitopsworld.DeploymentYAML("v1"), "apps/rollout.yaml": gitopsworld.RolloutYAML("Deployment"),
	})
	if err != nil {
		t.Fatal(err)
	}
	branch := "main"
	if o.deployBeforeMerge {
		branch = "bump"
		if err := repo.Branch(branch, first); err != nil {
			t.Fatal(err)
		}
		if _, err := s.project.Push(branch, "bob"); err != nil {
			t.Fatal(err)
		}
	}

	// Flux applies the branch from the Git server; the gate names the
	// project on GitLab.
	stage.FluxApplies(t, s.ns, repo.URL(), branch, first)
	stage.WaitRollout(t, s.ns, "Healthy on v1", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	if o.prepare != nil {
		if err := o.prepare(ctx, s.ns, s.gl); err != nil {
			t.Fatal(err)
		}
	}
	createGate(t, s, branch, o.gate)

	// Bob's merge request, merged by Alice unless released before.
	if s.mr, err = s.project.OpenMergeRequestOn("bump", "Bump checkout to v2", "bob", map[string]string{"apps/checkout.yaml": gitopsworld.DeploymentYAML("v2")}); err != nil {
		t.Fatal(err)
	}
	if o.deployBeforeMerge {
		s.released = s.gl.BranchHead(project, "bump")
	} else if s.released, err = s.project.Merge(s.mr, "alice"); err != nil {
		t.Fatal(err)
	}
	stage.WaitApplied(t, s.ns, s.released)
	s.paused = stage.WaitStep(t, s.ns, 1)
	paused := o.paused
	if paused == "" {
		paused = "step 1/3 paused: add label sluice/approve to continue"
	}
	waitStatus(t, s, s.released, "running", paused)
	return s
}

// createGate creates s's GitGate, following branch, changed by mutate, and
// waits until it is Ready.
func createGate(t *testing.T, s *shop, branch string, mutate func(*gitopsv1alpha1.GitGate)) {
	t.Helper()
	ctx := poll.Context(t)
	if err := suite.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gitlab"},
		StringData: map[string]string{"token": "glpat-" + botUser}}); err != nil {
		t.Fatal(err)
	}
	gate := &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git: gitopsv1alpha1.GitSource{URL: s.project.Git.URL(), Branch: branch},
			SCM: &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitLab, Repository: project, APIURL: s.gl.URL,
				SecretRef: meta.LocalObjectReference{Name: "gitlab"}},
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
	stage.WaitGateReady(t, s.ns)
}
