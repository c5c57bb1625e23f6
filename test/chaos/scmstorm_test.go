//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/poll"
)

// The GitHub side of the storm.
const (
	stormRepo  = "acme/shop"
	stormToken = "sluice-bot-token"
	stormPhase = 20 * time.Second
)

// Given a GitOps release (a Deployment of 4 pods, steps 1 / 2 / 100%, its
// manifests in Git applied by real Flux, a GitGate approving by label and by
// signed commit trailer) paused at step 1 with its pending status posted
// When GitHub answers every request 500 for 20s, then 403 with the primary
// rate limit spent for 20s, then 429 with Retry-After for 20s, and during
// the 500s a signed commit on the branch approves step 1 (a trailer, read
// from Git, needing no GitHub)
// Then the release holds at step 1 until the trailer and moves to step 2
// during the storm, and holds there (its approval is a label) through the
// rest of it; afterwards the status on the merge commit converges to step
// 2's pending, the label approves step 2 and the release completes with a
// success status; approvals are recorded once each, and no status (state
// and description) was posted twice.
func TestSCMStorm_releasesKeepToTheirGatesStatusesConverge(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gitSrv, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gitSrv.Close() })
	fx, err := flux.Start(ctx, flux.Options{Kubeconfig: suite.kubeconfig})
	if err != nil {
		t.Fatalf("starting Flux (make flux builds its binaries): %v", err)
	}
	t.Cleanup(func() {
		if err := fx.Stop(); err != nil {
			t.Log(err)
		}
	})
	startGitOpsManager(t)

	ns := "scmstorm-" + rand.String(6)
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gh.CreateRepo(stormRepo, "main", map[string]string{"README.md": "shop\n"})
	gh.AddToken(stormToken, "sluice-bot")
	gh.SetRole(stormRepo, "sluice-bot", githubfake.RoleWrite)
	gh.SetRole(stormRepo, "reviewer", githubfake.RoleWrite)
	repo, err := gitSrv.CreateRepo(ns+".git", "main")
	if err != nil {
		t.Fatal(err)
	}
	world := gitopsworld.Repo{Git: repo, GitHub: gh, Name: stormRepo}
	first, err := repo.Commit("main", gitserver.Change{Message: "Add checkout", Files: map[string]string{
		"apps/checkout.yaml": gitopsworld.DeploymentYAML("v1"), "apps/rollout.yaml": gitopsworld.RolloutYAML("Deployment")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := world.Mirror("main", first); err != nil {
		t.Fatal(err)
	}
	if err := fx.CreateGitRepository(ctx, flux.GitRepository{Namespace: ns, Name: "shop", URL: repo.URL()}); err != nil {
		t.Fatal(err)
	}
	if err := fx.CreateKustomization(ctx, flux.Kustomization{Namespace: ns, Name: "apps", Source: "shop", Path: "./apps", TargetNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	if err := fx.WaitApplied(ctx, ns, "apps", first); err != nil {
		t.Fatal(err)
	}
	waitRolloutState(t, ns, "Healthy on v1", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })

	release, releasePub, err := gitserver.NewOpenPGPKey("Release Manager", "rm@example.com")
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "github"}, StringData: map[string]string{"token": stormToken}})
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release-keys"}, Data: map[string][]byte{"openpgp": releasePub}})
	mustCreate(t, &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:             gitopsv1alpha1.GitSource{URL: repo.URL(), Branch: "main"},
			GitHub:          &gitopsv1alpha1.GitHubRepository{Repository: stormRepo, APIURL: gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Approval: gitopsv1alpha1.ApprovalPolicy{SigningKeysSecretRef: &meta.LocalObjectReference{Name: "release-keys"},
				AllowedCommitters: []string{"rm@example.com"}},
			Interval: metav1.Duration{Duration: time.Second},
		},
	})
	t.Cleanup(func() { explainGate(t, ns) })

	pr, merge, err := world.MergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{"apps/checkout.yaml": gitopsworld.DeploymentYAML("v2")})
	if err != nil {
		t.Fatal(err)
	}
	if err := fx.WaitApplied(ctx, ns, "apps", merge); err != nil {
		t.Fatal(err)
	}
	paused1 := "step 1/3 paused: add label sluice/approve to continue"
	paused2 := "step 2/3 paused: add label sluice/approve to continue"
	released := "released: 3/3 steps done"
	waitStep(t, ns, 1)
	waitStormStatus(t, gh, ns, merge, "pending", paused1)

	// The storm, phase 1: every request answered 500.
	stormBegan := time.Now()
	postsBefore := gh.Count("repos/create-commit-status")
	gh.FailFor("", http.StatusInternalServerError, stormPhase)
	holdStep(t, ns, 1, 5*time.Second)
	approve := "Approve checkout\n\nSluice-Approve: " + ns + "/checkout step=1 revision=" + merge[:10]
	signed, err := repo.Commit("main", gitserver.Change{Message: approve, Files: map[string]string{"NOTES.md": "approve 1\n"},
		Author: &object.Signature{Name: "Release Manager", Email: "rm@example.com"}, Signer: gitserver.OpenPGPSigner(release)})
	if err != nil {
		t.Fatal(err)
	}
	if err := world.Mirror("main", signed); err != nil {
		t.Fatal(err)
	}
	waitStep(t, ns, 2)
	if took := time.Since(stormBegan); took > stormPhase {
		t.Errorf("the trailer approval took effect %s into the storm, after GitHub's 500s ended (%s): a trailer needs no GitHub", took.Round(time.Second), stormPhase)
	} else {
		t.Logf("the trailer approval took effect %s into the 500s", took.Round(100*time.Millisecond))
	}
	// Phase 2: the primary rate limit spent; phase 3: a secondary limit.
	holdStep(t, ns, 2, time.Until(stormBegan.Add(stormPhase)))
	gh.ExhaustPrimary(time.Now().Add(stormPhase))
	holdStep(t, ns, 2, stormPhase)
	gh.LimitSecondary(stormPhase)
	holdStep(t, ns, 2, stormPhase)
	stormEnded := time.Now()

	// After the storm the status converges to step 2's pending.
	waitStormStatus(t, gh, ns, merge, "pending", paused2)
	t.Logf("statuses converged %s after the storm", time.Since(stormEnded).Round(100*time.Millisecond))
	if got := approvalsOf(t, ns); len(got) != 1 || got[0].Step != 1 || got[0].Via != "git-trailer" {
		t.Fatalf("approvals after the storm = %+v, want step 1 via git-trailer only", got)
	}

	// The label approves step 2; the release completes.
	// A label of the pause's own second does not count (GitHub and
	// Kubernetes keep whole seconds): wait for the next one.
	pausedAt := stormRolloutOf(t, ns).Status.CanaryStatus.LastUpdateTime.Time
	poll.Until(t, "the second after the pause", func() (bool, string) {
		return time.Now().Truncate(time.Second).After(pausedAt), pausedAt.String()
	})
	gh.AddLabel(stormRepo, pr, "sluice/approve", "reviewer")
	waitRolloutState(t, ns, "Healthy on v2", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	waitStormStatus(t, gh, ns, merge, "success", released)
	got := approvalsOf(t, ns)
	if len(got) != 2 || got[0].Step != 1 || got[0].Via != "git-trailer" || got[1].Step != 2 || got[1].Via != "github-label" {
		t.Errorf("approvals = %+v, want step 1 via git-trailer and step 2 via github-label, once each", got)
	}

	// No status posted twice with the same state and description.
	seen := map[string]int{}
	for _, s := range gh.Statuses(stormRepo, merge) {
		if s.Context == "sluice/"+ns+"/checkout" {
			seen[s.State+" "+s.Description]++
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("status %q posted %d times, want once", k, n)
		}
	}
	refused := 0
	for _, r := range gh.Requests() {
		if r.Operation == "repos/create-commit-status" && r.Status >= 400 {
			refused++
		}
	}
	t.Logf("statuses accepted on the merge commit: %v; status POSTs during and after the storm: %d (%d refused); requests in all: %d",
		seen, gh.Count("repos/create-commit-status")-postsBefore, refused, len(gh.Requests()))
}

// startGitOpsManager runs sluice in-process (the binary has no flag to read
// Git over plain HTTP) until the test ends.
func startGitOpsManager(t *testing.T) {
	t.Helper()
	const name = "sluice-scmstorm"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, env.ManagerConfig(suite.cfg), app.Options{
			MetricsAddr: "0", ProbeAddr: "0", Local: true, WebhookConfigName: name,
			OnReady: func() { close(ready) }, InProcessRestarts: true,
			ProgressDeadline: 10 * time.Minute, GitAllowInsecureHTTP: true,
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("sluice did not stop within 30s")
		}
		deleteWebhooks(name)
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("sluice stopped before it was ready: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("sluice not ready after 90s")
	}
}

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func stormRolloutOf(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "checkout"}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

func waitRolloutState(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) {
	t.Helper()
	poll.Until(t, "rollout "+what, func() (bool, string) {
		ro := stormRolloutOf(t, ns)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
}

func waitStep(t *testing.T, ns string, step int32) {
	t.Helper()
	waitRolloutState(t, ns, fmt.Sprintf("paused at step %d", step), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == step && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// holdStep checks, every 200ms for d, that the release is still paused at
// step.
func holdStep(t *testing.T, ns string, step int32, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		ro := stormRolloutOf(t, ns)
		if ro.Status.CurrentStepIndex != step || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
			t.Fatalf("during the storm the release moved to step %d %s without its approval, want paused at step %d",
				ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, step)
		}
	}
}

func waitStormStatus(t *testing.T, gh *githubfake.Server, ns, sha, state, description string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("status %s %q on %s", state, description, sha[:12]), func() (bool, string) {
		for _, s := range gh.Statuses(stormRepo, sha) {
			if s.Context == "sluice/"+ns+"/checkout" {
				return s.State == state && s.Description == description, fmt.Sprintf("%+v", gh.Statuses(stormRepo, sha))
			}
		}
		return false, "no status"
	})
}

func approvalsOf(t *testing.T, ns string) []approval.Approval {
	t.Helper()
	records, err := approval.Records(stormRolloutOf(t, ns).Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// explainGate logs, when the test failed, what the GitGate last said.
func explainGate(t *testing.T, ns string) {
	if !t.Failed() {
		return
	}
	g := &gitopsv1alpha1.GitGate{}
	if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "shop"}, g); err == nil {
		b, _ := json.Marshal(g.Status)
		t.Logf("GitGate status: %s", strings.TrimSpace(string(b)))
	}
}
