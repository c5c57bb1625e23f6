package webtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/web"
)

// TestRolloutPage_showsTheStepBeforeAndAfterApproval_live is the story of
// a person watching a release in the browser.
//
// Given a Deployment of 4 pods whose manifest names its Git commit, and a
// Rollout of 3 steps (1 pod, 50%, 100%), each waiting for approval,
// when its image changes, the page shows step 1 paused waiting for
// approval, 3 stable and 1 new pod, and the commit;
// when step 1 is approved, the open page (never reloaded) moves to step 2:
// step 1 done, 2 stable and 2 new pods, the approval with its identity;
// when step 2 is approved, the page shows every step done and the
// Deployment handed back; the index lists the Rollout.
func TestRolloutPage_showsTheStepBeforeAndAfterApproval_live(t *testing.T) {
	ns := newNamespace(t)
	const name = "shop"
	sha := "4f2a9c1e0b7d3a5f6e8c9b0a1d2e3f4a5b6c7d8e"
	deployment(t, ns, name, 4, "shop:v1", map[string]string{web.RevisionAnnotation: "main@sha1:" + sha})
	createRollout(t, ns, name, "1", "50%", "100%")
	tab := browser(t)
	page := suite.webURL + web.PagePath(ns, name)

	// When the image changes, the release stops at step 1.
	setImage(t, ns, name, "shop:v2")
	ro := waitStep(t, ns, name, 1, rolloutsv1beta1.CanaryStepStatePaused)
	if d := getDeployment(t, ns, name); !d.Spec.Paused {
		t.Fatalf("deployment not held at step 1: paused=%v", d.Spec.Paused)
	}
	if got := podImages(t, ns, name); got["shop:v1"] != 3 || got["shop:v2"] != 1 {
		t.Fatalf("pods at step 1 = %v, want 3 shop:v1 and 1 shop:v2", got)
	}

	// Then the page shows step 1 paused, the pods per revision and the commit.
	open(tab, t, page)
	st := waitPage(tab, t, "step 1 paused with 3 stable and 1 new pod", func(s pageState) bool {
		return reflect.DeepEqual(s.Steps, []string{"paused", "pending", "pending"}) &&
			reflect.DeepEqual(s.Pods, []podRow{{Role: "stable", Pods: 3, Ready: 3}, {Role: "new", Pods: 1, Ready: 1}}) && s.Live == "live"
	})
	if st.Phase != "Progressing" || !strings.HasPrefix(st.Current, "step 1/3 StepPaused") || st.Waiting != "Waiting for approval of step 1" {
		t.Errorf("header at step 1: %s", st)
	}
	if st.Commit != sha {
		t.Errorf("commit shown = %q, want %s", st.Commit, sha)
	}
	if len(st.Approvals) != 0 {
		t.Errorf("approvals before any: %v", st.Approvals)
	}
	if st.Traffic != [2]float64{25, 100} {
		t.Errorf("traffic meter at step 1 = %v, want 25 of 100 (1 of 4 ready pods, no routes)", st.Traffic)
	}
	markPage(tab, t, "loaded-once")
	screenshot(tab, t, "rollout-step1-paused.png")

	// When step 1 is approved, the open page moves to step 2 by itself.
	revision := ro.Status.CanaryStatus.CanaryRevision
	approve(t, ns, name, revision, 1)
	waitStep(t, ns, name, 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, name); got["shop:v1"] != 2 || got["shop:v2"] != 2 {
		t.Fatalf("pods at step 2 = %v, want 2 shop:v1 and 2 shop:v2", got)
	}
	st = waitPage(tab, t, "step 2 paused with 2 stable and 2 new pods", func(s pageState) bool {
		return reflect.DeepEqual(s.Steps, []string{"done", "paused", "pending"}) &&
			reflect.DeepEqual(s.Pods, []podRow{{Role: "stable", Pods: 2, Ready: 2}, {Role: "new", Pods: 2, Ready: 2}}) &&
			len(s.Approvals) == 1
	})
	if st.Marker != "loaded-once" || st.Updates < 1 {
		t.Errorf("the page was reloaded or not updated live: marker %q, %d updates", st.Marker, st.Updates)
	}
	if !strings.HasPrefix(st.Current, "step 2/3 StepPaused") || st.Waiting != "Waiting for approval of step 2" {
		t.Errorf("header at step 2: %s", st)
	}
	if a := st.Approvals[0]; !strings.HasPrefix(a, "step 1 by ") || !strings.HasSuffix(a, " via annotation") || strings.Contains(a, "by -") {
		t.Errorf("approval shown = %q, want step 1 by <user> via annotation", a)
	}
	screenshot(tab, t, "rollout-step2-after-approval.png")

	// When step 2 is approved, the release finishes and the page says so.
	approve(t, ns, name, revision, 2)
	waitRollout(t, ns, name, "Healthy after the release", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	eventually(t, "deployment handed back on shop:v2", func() (bool, string) {
		d := getDeployment(t, ns, name)
		pods := podImages(t, ns, name)
		return !d.Spec.Paused && pods["shop:v2"] == 4 && len(pods) == 1, fmt.Sprintf("paused=%v pods=%v", d.Spec.Paused, pods)
	})
	st = waitPage(tab, t, "every step done and 4 current pods", func(s pageState) bool {
		return reflect.DeepEqual(s.Steps, []string{"done", "done", "done"}) && s.Phase == "Healthy" &&
			reflect.DeepEqual(s.Pods, []podRow{{Role: "current", Pods: 4, Ready: 4}}) && len(s.Approvals) == 2
	})
	if st.Marker != "loaded-once" || st.Waiting != "" {
		t.Errorf("after the release: %s", st)
	}
	screenshot(tab, t, "rollout-done.png")

	// The index lists the Rollout with its step and links to its page.
	open(tab, t, suite.webURL+"/")
	row := waitIndexRow(tab, t, ns+"/"+name)
	if row.Step != "3/3" || row.Phase != "Healthy" || row.Link != page {
		t.Errorf("index row = %+v, want step 3/3 Healthy linking to %s", row, page)
	}
	screenshot(tab, t, "index.png")
}
