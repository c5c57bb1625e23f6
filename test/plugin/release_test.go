package plugin

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment of 4 pods on v1 and a Rollout with steps 1 / 50% /
// 100%, each waiting for an approval
// When its image changes to v2 and the release is driven with the plugin
// Then get lists the release at each step, status marks the current step
// and gives the approve command, pause and resume flip
// spec.strategy.paused, approve moves the release on and the record shows
// the admin's approval via the annotation, promote-full completes it, and
// history lists both approvals after the revisions, newest last.
func TestPlugin_multiBatchRelease_drivenWithThePlugin(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, 4, v1)
	createRollout(t, ns, "apps/v1", "Deployment", canary(step("1", nil), step("50%", nil), step("100%", nil)))

	_, err := sluice(t, "approve", "web", "-n", ns)
	if err == nil || !strings.Contains(err.Error(), "rollout "+ns+"/web has no release in progress (phase Healthy") {
		t.Fatalf("approve without a release: %v", err)
	}

	setImage(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, v2)
	ro := waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 3, v2: 1})
	rev, stable, podHash := revisionOf(ro), ro.Status.CanaryStatus.StableRevision, ro.Status.CanaryStatus.PodTemplateHash

	// get, in the three ways.
	out := mustSluice(t, "get", "rollouts", "-n", ns)
	assertContains(t, "get rollouts", out, "NAME PHASE STEP STATE WORKLOAD REVISION READY AGE\nweb Progressing 1/3 StepPaused Deployment/web "+rev+" 1/4 ")
	out = mustSluice(t, "get", "ro", "-A", "-o", "wide")
	assertContains(t, "get ro -A -o wide", out, "NAMESPACE NAME PHASE", ns+" web Progressing 1/3 StepPaused Deployment/web "+rev+" 1/4",
		"Step 1/3 paused, waiting for approval")
	out = mustSluice(t, "get", "rollout", "web", "-n", ns, "-o", "json")
	var printed rolloutsv1beta1.Rollout
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Kind != "Rollout" || printed.Name != "web" || revisionOf(&printed) != rev {
		t.Fatalf("get -o json: %v, %s %s revision %s", err, printed.Kind, printed.Name, revisionOf(&printed))
	}

	// status at step 1.
	out = mustSluice(t, "status", "web", "-n", ns)
	assertContains(t, "status at step 1", out,
		"Phase: Progressing, step 1/3 StepPaused",
		"=> 1 replicas 1 pause until approved StepPaused",
		"2 replicas 50% pause until approved\n",
		"Pods (selector app=web, revision label pod-template-hash):",
		stable+" stable 3 3 app="+v1,
		podHash+" new 1 1 app="+v2,
		"Approve it with:\nkubectl sluice approve web -n "+ns,
		"Progressing")

	// pause and resume flip the field; approve refuses a paused Rollout.
	out = mustSluice(t, "pause", "web", "-n", ns)
	assertContains(t, "pause", out, "rollout "+ns+"/web paused (spec.strategy.paused: true)")
	if !getRollout(t, ns).Spec.Strategy.Paused {
		t.Fatal("pause did not set spec.strategy.paused")
	}
	if _, err := sluice(t, "approve", "web", "-n", ns); err == nil || !strings.Contains(err.Error(), "resume it first with kubectl sluice resume web -n "+ns) {
		t.Fatalf("approve of a paused Rollout: %v", err)
	}
	assertContains(t, "status while paused", mustSluice(t, "status", "web", "-n", ns), "Resume it with:\nkubectl sluice resume web -n "+ns)
	out = mustSluice(t, "resume", "web", "-n", ns)
	assertContains(t, "resume", out, "rollout "+ns+"/web resumed")
	if getRollout(t, ns).Spec.Strategy.Paused {
		t.Fatal("resume did not clear spec.strategy.paused")
	}

	// approve step 1, with status --watch running beside it.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	var watched syncBuffer
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := runTo(watchCtx, t, &watched, "status", "web", "-n", ns, "--watch", "--timeout", "2m"); err != nil {
			t.Errorf("status --watch: %v", err)
		}
	})
	eventually(t, "status --watch to draw step 1", func() (bool, string) {
		return strings.Contains(squeeze(watched.String()), "=> 1 replicas 1 pause until approved StepPaused"), watched.String()
	})
	out = mustSluice(t, "approve", "web", "-n", ns)
	assertContains(t, "approve", out,
		"rollout "+ns+"/web: step 1 of revision "+rev+" approved by sluice-admin (sluice.dev/approve=step=1,revision="+rev+")",
		"sluice applied step 1 of revision "+rev+", approved by sluice-admin via annotation")
	ro = getRollout(t, ns)
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("after approve the release is at step %d %s, want step 2", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	r := records(t, ro)
	if len(r) != 1 || r[0].Step != 1 || r[0].Revision != rev || r[0].By != "sluice-admin" || r[0].Via != "annotation" {
		t.Fatalf("approval record after approve: %+v", r)
	}
	waitStep(t, ns, 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 2, v2: 2})
	assertContains(t, "status at step 2", mustSluice(t, "status", "web", "-n", ns),
		"done 1 replicas 1", "=> 2 replicas 50% pause until approved StepPaused", podHash+" new 2 2 app="+v2,
		"Approvals of revision "+rev+":\nstep 1 by sluice-admin via annotation")
	eventually(t, "status --watch to draw step 2 paused", func() (bool, string) {
		return strings.Contains(squeeze(watched.String()), "=> 2 replicas 50% pause until approved StepPaused"), ""
	})
	stopWatch()
	wg.Wait()
	if frames := strings.Count(watched.String(), "---- "); frames < 2 {
		t.Fatalf("status --watch drew %d pages, want the page of step 1 and later ones:\n%s", frames, watched.String())
	}

	// promote-full completes the release.
	out = mustSluice(t, "promote-full", "web", "-n", ns)
	assertContains(t, "promote-full", out,
		"steps 2 to 3 of revision "+rev+" approved by sluice-admin",
		"sluice applied step 2 of revision "+rev+", approved by sluice-admin via annotation")
	ro = getRollout(t, ns)
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy ||
		ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted || c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("after promote-full: phase %s state %s Succeeded %+v", ro.Status.Phase, ro.Status.CurrentStepState, c)
	}
	waitPods(t, ns, map[string]int{v2: 4})
	d := &appsv1.Deployment{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil || d.Spec.Paused {
		t.Fatalf("deployment after the release: %v, paused %v", err, d.Spec.Paused)
	}
	if r := records(t, ro); len(r) != 2 || r[1].Step != 2 || r[1].By != "sluice-admin" || r[1].Via != "annotation" {
		t.Fatalf("approval record after promote-full: %+v", r)
	}
	assertContains(t, "get after the release", mustSluice(t, "get", "rollouts", "-n", ns), "web Healthy 3/3 Completed Deployment/web "+rev+" 4/4")

	// history: revisions, then the release's events and approvals.
	out = mustSluice(t, "history", "web", "-n", ns)
	assertContains(t, "history", out,
		"revision ReplicaSet web-"+stable+" #1 app="+v1,
		"revision ReplicaSet web-"+podHash+" #2 app="+v2+" (current)",
		"approval step 1 of revision "+rev+" approved by sluice-admin via annotation",
		"approval step 2 of revision "+rev+" approved by sluice-admin via annotation",
		"event Normal Completed: Rollout completed: revision "+rev+" released")
	first, second := strings.Index(out, "step 1 of revision"), strings.Index(out, "step 2 of revision")
	started, completed := strings.Index(out, "Normal Progressing"), strings.Index(out, "Normal Completed")
	if started < 0 || started > first || first > second || second > completed {
		t.Fatalf("history is not oldest first: started at %d, approvals at %d and %d, completed at %d", started, first, second, completed)
	}
}
