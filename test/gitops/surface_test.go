package gitops

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/receiver"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// The GitHub App sluice runs as in the App stories: its id, installation and slug (its bot
// is "sluice[bot]").
const (
	appID          = 4711
	installationID = 99
	appBot         = "sluice[bot]"
)

// newAppWorld is newWorld with sluice authenticated as a GitHub App installation (the Secret
// holds appID, installationID and privateKey) rather than a token, and webhook deliveries
// signed with hookSecret accepted for the repository.
func newAppWorld(t *testing.T, hookSecret []byte, mutate func(*gitopsv1alpha1.GitGate)) *world {
	t.Helper()
	w := newBareWorld(t, "gitops-app-", "Deployment")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	w.gh.AddApp(appID, "", installationID, &key.PublicKey, "sluice", time.Hour)
	first := w.commit("main", "Add checkout", map[string]string{manifest: w.manifestYAML("v1"), rolloutManifest: w.rolloutYAML()})
	w.mirror("main", first)
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "github"}, StringData: map[string]string{
		"appID": fmt.Sprint(appID), "installationID": fmt.Sprint(installationID),
		"privateKey": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
	}})
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "hook"}, Data: map[string][]byte{"token": hookSecret}})
	w.startFlux(kustomization, w.ns, "./apps", w.ns)
	w.waitApplied(first)
	w.waitDeployment("v1", 4)
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.gate = &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:              gitopsv1alpha1.GitSource{URL: w.repo.URL(), Branch: "main"},
			GitHub:           &gitopsv1alpha1.GitHubRepository{Repository: ghRepo, APIURL: w.gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			RolloutSelector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Status:           gitopsv1alpha1.StatusPolicy{TargetURL: "https://sluice.example/${namespace}/${rollout}?revision=${revision}"},
			WebhookSecretRef: &meta.LocalObjectReference{Name: "hook"},
			Interval:         metav1.Duration{Duration: time.Second},
		},
	}
	if mutate != nil {
		mutate(w.gate)
	}
	mustCreate(t, w.gate)
	t.Cleanup(w.explainFailure)
	w.waitGate("Ready", func(g *gitopsv1alpha1.GitGate) bool {
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) && g.Status.BoundRollouts == 1
	})
	return w
}

// sticky returns sluice's comments for the checkout Rollout on pull request pr, and the
// number of comments there.
func (w *world) sticky(pr int, bot string) ([]githubfake.IssueComment, int) {
	all := w.gh.Comments(ghRepo, pr)
	var mine []githubfake.IssueComment
	for _, c := range all {
		if c.Author == bot && strings.Contains(c.Body, scm.CommentMarker(w.ns+"/checkout")) {
			mine = append(mine, c)
		}
	}
	return mine, len(all)
}

// waitComment waits until pull request pr holds exactly one comment, sluice's (by bot), and
// it contains every text.
func (w *world) waitComment(pr int, bot string, texts ...string) githubfake.IssueComment {
	w.t.Helper()
	var c githubfake.IssueComment
	w.eventually(fmt.Sprintf("sluice's comment on #%d saying %q", pr, texts), func() (bool, string) {
		mine, all := w.sticky(pr, bot)
		if len(mine) != 1 || all != 1 {
			return false, fmt.Sprintf("%d comments, %d of them sluice's: %+v", all, len(mine), w.gh.Comments(ghRepo, pr))
		}
		c = mine[0]
		for _, text := range texts {
			if !strings.Contains(c.Body, text) {
				return false, c.Body
			}
		}
		return true, ""
	})
	return c
}

// waitCheckRun waits until the commit sha holds exactly one check run, sluice's for checkout,
// with status and the buttons identifiers, its summary containing every text.
func (w *world) waitCheckRun(sha, status string, buttons []string, texts ...string) githubfake.CheckRun {
	w.t.Helper()
	var run githubfake.CheckRun
	w.eventually(fmt.Sprintf("one check run on %s, %s with buttons %v", sha[:12], status, buttons), func() (bool, string) {
		runs := w.gh.CheckRuns(ghRepo, sha)
		if len(runs) != 1 {
			return false, fmt.Sprintf("%d check runs: %+v", len(runs), runs)
		}
		run = runs[0]
		var ids []string
		for _, a := range run.Actions {
			ids = append(ids, a.Identifier)
		}
		if run.Name != "sluice/"+w.ns+"/checkout" || run.ExternalID != w.ns+"/checkout" || run.App != appID || run.Status != status ||
			strings.Join(ids, ",") != strings.Join(buttons, ",") {
			return false, fmt.Sprintf("%+v", run)
		}
		for _, text := range texts {
			if !strings.Contains(run.Summary, text) {
				return false, run.Summary
			}
		}
		return true, ""
	})
	return run
}

// press has who press the button identifier of check run id, delivered signed with secret.
func (w *world) press(secret []byte, id int64, identifier, who string) githubfake.Delivery {
	w.t.Helper()
	d, err := w.gh.DeliverRequestedAction(context.Background(), suite.hookURL, secret, ghRepo, id, identifier, who)
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// Story: sluice runs as a GitHub App. A merged pull request's release pauses at step 1: the
// pull request gets one sticky comment and the merge commit one check run with the buttons
// "Approve step 1", "Promote" and "Roll back". A press by a reader is refused, and the comment
// says why; a forged press is refused at the door. The reviewer's press of "Approve step 1"
// starts step 2, recorded as the reviewer's via the check run, and the comment and the check
// run are edited in place. Presses delivered at once to the receiver are all recorded. The
// reviewer's "Promote" finishes the release: the check run completes with success.
func TestGitGate_asGitHubApp_checkRunButtonsApproveAndTheCommentFollows(t *testing.T) {
	secret := []byte("app-hook-secret")
	w := newAppWorld(t, secret, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Interval = metav1.Duration{Duration: time.Hour} // the presses and the Rollout wake the gate
	})
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	w.gh.SetRole(ghRepo, "mallory", githubfake.RoleRead)

	// Given v2 merged (by the reviewer, opened by dev), applied by Flux, paused at step 1.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// Then the pull request has sluice's comment and the merge commit its check run.
	w.waitComment(pr, appBot, "Step 1/3 paused", "| ▶ | **1** | 1 |", "`sluice/approve`", "**Approve step 1**")
	run := w.waitCheckRun(merge, "in_progress", []string{"approve-1", "promote", "rollback"}, "Step 1/3 paused")
	w.afterPause()

	// When mallory, who may only read, presses "Approve step 1".
	if d := w.press(secret, run.ID, "approve-1", "mallory"); d.Status != http.StatusOK {
		t.Fatalf("mallory's press answered %d, want 200 (recorded, then judged)", d.Status)
	}
	// Then it is refused, saying why, in the gate's status and the comment, and step 1 waits on.
	w.waitGate("refusing mallory's press", func(g *gitopsv1alpha1.GitGate) bool {
		for _, r := range g.Status.Rollouts[0].Refused {
			if r.Reason == "InsufficientPermission" && strings.Contains(r.Message, "mallory has read permission, write is needed") {
				return true
			}
		}
		return false
	})
	w.waitComment(pr, appBot, "Refused", "pressed by mallory: mallory has read permission, write is needed")
	w.waitEvent("GitGate", "shop", "InsufficientPermission", "pressed by mallory")

	// When someone without the webhook secret forges the reviewer's press.
	if d := w.press([]byte("guess"), run.ID, "approve-1", "reviewer"); d.Status != http.StatusUnauthorized {
		t.Fatalf("forged press answered %d, want 401", d.Status)
	}
	w.afterSecond()
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 || len(w.approvals()) != 0 {
		t.Fatalf("step %d with approvals %+v after refused presses, want step 1 and none", ro.Status.CurrentStepIndex, w.approvals())
	}

	// When the reviewer presses "Approve step 1".
	approve := w.press(secret, run.ID, "approve-1", "reviewer")
	if approve.Status != http.StatusOK {
		t.Fatalf("the reviewer's press answered %d, want 200", approve.Status)
	}
	// Then step 2 runs and pauses, approved by the reviewer via the check run.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	if got := w.approvals(); len(got) != 1 || got[0].Step != 1 || got[0].By != "reviewer" || got[0].Via != "github-check-run" {
		t.Fatalf("approvals = %+v, want step 1 by reviewer via github-check-run", got)
	}
	// And the comment and the check run are edited in place: one of each, saying step 2.
	c := w.waitComment(pr, appBot, "Step 2/3 paused", "step 1 approved by **reviewer** via github-check-run", "**Approve step 2**")
	t.Logf("sluice's comment at step 2:\n%s", c.Body)
	if c.Edits < 2 {
		t.Errorf("comment edited %d times, want at least twice (the refusal, then step 2)", c.Edits)
	}
	run2 := w.waitCheckRun(merge, "in_progress", []string{"approve-2", "promote", "rollback"}, "Step 2/3 paused", "step 1 approved by **reviewer**")
	if run2.ID != run.ID || run2.Updates == 0 {
		t.Fatalf("check run %d (updated %d times), want run %d updated in place", run2.ID, run2.Updates, run.ID)
	}

	// When GitHub redelivers the reviewer's press, and three readers' presses arrive at once.
	if again, err := w.gh.Redeliver(context.Background(), suite.hookURL, secret, approve); err != nil || again.Status != http.StatusOK {
		t.Fatalf("redelivery: %d, %v", again.Status, err)
	}
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i := range ids {
		wg.Go(func() {
			d := w.press(secret, run.ID, "approve-2", fmt.Sprintf("reader%d", i))
			ids[i] = d.ID
		})
	}
	wg.Wait()
	// Then every press is on record once (none lost to the concurrent writes), and nothing moved.
	w.waitGate("every press recorded", func(g *gitopsv1alpha1.GitGate) bool {
		list, err := receiver.DecodePresses(g.Annotations[receiver.PressesAnnotation])
		if err != nil {
			return false
		}
		seen := map[string]int{}
		for _, p := range list {
			seen[p.Delivery]++
		}
		return len(list) == 5 && seen[approve.ID] == 1 && seen[ids[0]] == 1 && seen[ids[1]] == 1 && seen[ids[2]] == 1
	})
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 2 || len(w.approvals()) != 1 {
		t.Fatalf("step %d with %d approvals after the redelivery and the readers' presses, want step 2 and 1", ro.Status.CurrentStepIndex, len(w.approvals()))
	}

	// When the reviewer presses "Promote".
	w.afterPause()
	if d := w.press(secret, run.ID, "promote", "reviewer"); d.Status != http.StatusOK {
		t.Fatalf("promote answered %d", d.Status)
	}
	// Then the release completes; the check run completes with success and no buttons, and the
	// comment says it was released.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
	done := w.waitCheckRun(merge, "completed", nil, "Released: 3/3 steps done", "every remaining step approved by **reviewer**")
	if done.Conclusion != "success" || done.ID != run.ID {
		t.Fatalf("check run = %+v, want run %d completed with success", done, run.ID)
	}
	w.waitComment(pr, appBot, "Released: 3/3 steps done")
}

// Story: with a token (no App), the pull request still gets one sticky comment edited in place
// as the release moves on, and no check run (GitHub lets only Apps write them); with
// spec.status.disableComment it gets none.
func TestGitGate_withToken_stickyCommentAndNoCheckRuns(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	first := w.waitComment(pr, "sluice-bot", "Step 1/3 paused", "`/sluice approve`")
	if strings.Contains(first.Body, "Check run") {
		t.Errorf("the comment offers check-run buttons without an App:\n%s", first.Body)
	}

	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitComment(pr, "sluice-bot", "Step 2/3 paused", "step 1 approved by **reviewer** via github-label")
	if runs := w.gh.CheckRuns(ghRepo, merge); len(runs) != 0 || w.gh.Count("checks/create") != 0 {
		t.Fatalf("check runs %+v written with a token", runs)
	}

	// When the gate opts out of the comment, the next change leaves it as it was.
	g := w.getGate()
	base := g.DeepCopy()
	g.Spec.Status.DisableComment = true
	if err := suite.c.Patch(ctxFor(t), g, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	w.waitGate("the new spec observed", func(g *gitopsv1alpha1.GitGate) bool { return g.Status.ObservedGeneration == g.Generation })
	edits := w.gh.Count("issues/update-comment")
	w.afterPause()
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.gh.AddLabel(ghRepo, pr, "sluice/promote-full", "reviewer")
	w.waitStatus(merge, "success", "released: 3/3 steps done")
	if n := w.gh.Count("issues/update-comment"); n != edits {
		t.Fatalf("the comment was edited %d more times with disableComment", n-edits)
	}
}

// Story: two sluice replicas under leader election, sluice a GitHub App. GitHub delivers a
// press of "Approve step 1" to the standby: the standby verifies it and records it on the
// GitGate, and the leader applies it within seconds, as the presser's approval.
func TestGitGate_checkRunPressToTheStandby_reachesTheLeader(t *testing.T) {
	secret := []byte("ha-app-hook-secret")
	suite.stopManager()
	t.Cleanup(func() {
		if err := startManager(context.Background()); err != nil {
			t.Errorf("restarting the suite's sluice: %v", err)
		}
	})
	flags := []string{"--leader-elect", "--leader-election-namespace=default", "--leader-election-lease-duration=4s", "--git-allow-insecure-http"}
	leader, standby := electedPair(t, startReplica(t, "sluice-press-a", flags...), startReplica(t, "sluice-press-b", flags...))

	w := newAppWorld(t, secret, func(g *gitopsv1alpha1.GitGate) { g.Spec.Interval = metav1.Duration{Duration: time.Hour} })
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	run := w.waitCheckRun(merge, "in_progress", []string{"approve-1", "promote", "rollback"}, "Step 1/3 paused")
	w.waitComment(pr, appBot, "Step 1/3 paused")
	w.afterPause()

	// When GitHub delivers the reviewer's press to the standby.
	delivered := time.Now()
	d, err := w.gh.DeliverRequestedAction(context.Background(), hookURL(standby), secret, ghRepo, run.ID, "approve-1", "reviewer")
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("press delivered to the standby answered %d, %v; want 200", d.Status, err)
	}
	// Then the standby recorded it on the gate, and the leader approved step 1 as the reviewer.
	if list, err := receiver.DecodePresses(w.getGate().Annotations[receiver.PressesAnnotation]); err != nil || len(list) != 1 || list[0].Delivery != d.ID {
		t.Fatalf("presses on the gate = %+v, %v; want the delivery %s", list, err, d.ID)
	}
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	if took := time.Since(delivered); took > 15*time.Second {
		t.Errorf("step 2 started %s after the press reached the standby, want within seconds", took)
	}
	if got := w.approvals(); len(got) != 1 || got[0].By != "reviewer" || got[0].Via != "github-check-run" {
		t.Fatalf("approvals = %+v, want step 1 by reviewer via github-check-run", got)
	}
	w.waitCheckRun(merge, "in_progress", []string{"approve-2", "promote", "rollback"}, "Step 2/3 paused")
	if !leader.Leader() || standby.Leader() {
		t.Fatalf("leadership moved during the story: %s leads %v, %s leads %v", leader.Name, leader.Leader(), standby.Name, standby.Leader())
	}
}
