package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment of 4 pods applied from Git (server-side, by Flux's
// kustomize-controller), behind a Service and an HTTPRoute, released in
// place with traffic steps 1 pod 20% / 50% 50% / 100%, paused at step 2
// (2 pods of v2 with half the requests)
// When someone aborts the release (sluice.dev/abort=true)
// Then every request goes back to the stable pods and every pod back to
// v1, without the pod template changing (it still says v2, as Git does);
// the route and the stable Service are as before the release; the
// Rollout is Aborted, recorded as the admin's abort at step 2; ready pods
// never fall below what maxUnavailable allows
// When Flux's drift correction and Argo CD's self-heal apply the same
// commit again
// Then nothing is released again: still Aborted, every pod on v1
// When the revert syncs (the template set back to v1)
// Then the rollback completes at once: Healthy, Succeeded=False
// (RolledBack), the Deployment handed back exactly as it was configured.
func TestAbort_deploymentInPlace_holdsAgainstReappliesUntilTheRevertSyncs(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	applyAs(t, fluxManager, deploymentManifest(ns, "web", 4, v1))
	waitDeploymentComplete(t, ns, "web", v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", "100%")))
	rulesBefore, svcBefore := rulesJSON(t, ns, "web"), userView(t, ns, "web", serviceGVK)

	applyAs(t, fluxManager, deploymentManifest(ns, "web", 4, v2))
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:50,web-canary:50]" {
		t.Fatalf("step 2 rules: %s", got)
	}
	if got := podImages(t, ns, "web"); got[v1] != 2 || got[v2] != 2 {
		t.Fatalf("step 2: pods by image %v", got)
	}
	capacity := watchCapacity(t, ns, "web")

	requestAbort(t, ns, "web")
	waitAborted(t, ns, "web", 2)
	waitPods(t, ns, "web", map[string]int{v1: 4})
	if img := deploymentImage(t, ns, "web")(); img != v2 {
		t.Fatalf("pod template image %s after the abort, want v2 (Git's)", img)
	}
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("route rules while aborted:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	eventually(t, "stable Service as before, canary Service gone", func() (bool, string) {
		got := userView(t, ns, "web", serviceGVK)
		return got == svcBefore && getObject(t, ns, "web-canary", serviceGVK) == nil, got
	})
	if got := selectedPods(t, ns, "web"); !maps.Equal(got, map[string]int{v1: 4}) {
		t.Fatalf("stable Service selects %v", got)
	}
	assertHeld(t, ns, "web")
	// 4 pods, maxSurge and maxUnavailable 25% (1 pod): the pods move back
	// one at a time.
	if err := capacity.within(5, 3); err != nil {
		t.Fatalf("capacity while moving back to the stable revision: %v", err)
	}

	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 4, v2))
	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 4, v2))
	assertStaysAborted(t, ns, "web", map[string]int{v1: 4}, deploymentImage(t, ns, "web"), v2)

	applyAs(t, fluxManager, deploymentManifest(ns, "web", 4, v1))
	waitRolledBack(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("route rules after the rollback:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	assertSluiceOwnsNothing(t, ns, "web", httpRouteGVK)
}

// Given a release of v2 in place paused at step 2 of 1 / 50% / 100% (5 of
// 10 pods), aborted and held on v1
// When someone retries it (sluice.dev/retry=true)
// Then revision v2 is released again from step 1 (1 pod), against v1
// When it is aborted again, then Git brings v3
// Then v3 is released from step 1 against the same stable revision v1.
func TestAbort_deploymentInPlace_retryThenANewRevision(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	canary, stable := ro.Status.CanaryStatus.CanaryRevision, ro.Status.CanaryStatus.StableRevision

	requestAbort(t, ns, "web")
	waitAborted(t, ns, "web", 2)
	waitPods(t, ns, "web", map[string]int{v1: 10})

	requestRetry(t, ns, "web")
	ro = waitRollout(t, ns, "web", "retried: step 1 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 1 &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	if cs := ro.Status.CanaryStatus; cs.CanaryRevision != canary || cs.StableRevision != stable || ro.Status.Aborted != nil {
		t.Fatalf("after the retry: %s", describe(ro))
	}
	waitPods(t, ns, "web", map[string]int{v1: 9, v2: 1})
	if r := approvalRecords(t, ns, "web"); len(r) < 3 || r[len(r)-2].Action != "abort" || r[len(r)-1].Action != "retry" || r[len(r)-1].By != "sluice-admin" {
		t.Fatalf("approval records %+v, want the abort and the retry recorded", r)
	}

	requestAbortAs(t, ns, "web", canary) // a new value: "true" again would be the same request
	waitAborted(t, ns, "web", 1)
	waitPods(t, ns, "web", map[string]int{v1: 10})
	setImage(t, ns, "web", v3)
	ro = waitRollout(t, ns, "web", "v3 at step 1", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 1 &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused && r.Status.CanaryStatus.CanaryRevision != canary
	})
	if ro.Status.CanaryStatus.StableRevision != stable {
		t.Fatalf("v3 released against %s, want the stable %s", ro.Status.CanaryStatus.StableRevision, stable)
	}
	waitPods(t, ns, "web", map[string]int{v1: 9, v3: 1})
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitCompleted(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v3)
}

// Given Deployments released in place whose pods are split in the shapes
// where Kubernetes' scaling of a paused Deployment fights a naive move (the
// new ReplicaSet larger by exactly the pods that may move at once; an even
// split; every pod already new at a 100% step that pauses)
// When the release is aborted
// Then every pod goes back to the stable revision, never more than
// maxUnavailable (at least 1) fewer ready pods than replicas.
func TestAbort_deploymentInPlace_balancedSplitsConverge(t *testing.T) {
	for _, tt := range []struct {
		name     string
		replicas int32
		steps    []rolloutsv1beta1.CanaryStep
		paused   int32
		split    map[string]int
	}{
		{"3 pods, 2 new 1 stable, 1 at a time", 3, []rolloutsv1beta1.CanaryStep{step("2", nil), step("100%", nil)}, 1, map[string]int{v1: 1, v2: 2}},
		{"4 pods, 2 and 2", 4, []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)}, 1, map[string]int{v1: 2, v2: 2}},
		{"4 pods, all new at a paused 100% step", 4, []rolloutsv1beta1.CanaryStep{step("50%", ptr[int32](0)), step("100%", nil), step("100%", nil)}, 2,
			map[string]int{v2: 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			deployment(t, ns, "web", tt.replicas, v1)
			createRollout(t, newRollout(ns, "web", tt.steps...))
			setImage(t, ns, "web", v2)
			waitStep(t, ns, "web", tt.paused, rolloutsv1beta1.CanaryStepStatePaused)
			waitPods(t, ns, "web", tt.split)
			capacity := watchCapacity(t, ns, "web")
			requestAbort(t, ns, "web")
			waitAborted(t, ns, "web", tt.paused)
			waitPods(t, ns, "web", map[string]int{v1: int(tt.replicas)})
			unavailable := max(int(tt.replicas)/4, 1)
			if err := capacity.within(int(tt.replicas)+unavailable, int(tt.replicas)-unavailable); err != nil {
				t.Fatalf("capacity: %v", err)
			}
			assertStaysAborted(t, ns, "web", map[string]int{v1: int(tt.replicas)}, deploymentImage(t, ns, "web"), v2)
		})
	}
}

// approvalRecords reads the record sluice keeps in sluice.dev/approvals.
func approvalRecords(t *testing.T, ns, name string) []struct {
	Action, Revision, By, Via string
	Step                      int32
} {
	t.Helper()
	var out []struct {
		Action, Revision, By, Via string
		Step                      int32
	}
	raw := getRollout(t, ns, name).Annotations[rolloutsv1beta1.ApprovalsAnnotation]
	if raw == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("approval record %q: %v", raw, err)
	}
	return out
}

// Given a canary-style release (an extra canary Deployment) of a
// Deployment of 6 pods applied from Git, behind a Service and an
// HTTPRoute, paused at step 2 (3 canary pods with half the requests)
// When the release is aborted
// Then every request goes back to the stable pods (the route and the
// Service as before the release), the canary Deployment and its pods are
// deleted, and the stable Deployment keeps the very pods it ran, its
// template still v2 as in Git
// When the GitOps tools apply the same commit twice
// Then no canary comes back and the Rollout stays Aborted
// When the revert syncs
// Then the rollback completes: Healthy, Succeeded=False, the stable
// Deployment handed back.
func TestAbort_canaryDeployment_deletesTheCanaryAndHolds(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	applyAs(t, fluxManager, deploymentManifest(ns, "web", 6, v1))
	waitDeploymentComplete(t, ns, "web", v1)
	stablePods := podNames(t, ns, "web")
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", "100%")))
	rulesBefore, svcBefore := rulesJSON(t, ns, "web"), userView(t, ns, "web", serviceGVK)

	applyAs(t, fluxManager, deploymentManifest(ns, "web", 6, v2))
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 6}, canaryName(ro): {v2: 3}})
	if got := routeRules(t, ns, "web"); got != "[/ -> web:50,web-canary:50]" {
		t.Fatalf("step 2 rules: %s", got)
	}

	requestAbort(t, ns, "web")
	waitAborted(t, ns, "web", 2)
	assertNoCanary(t, ns, "web")
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("route rules while aborted:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	eventually(t, "stable Service as before, canary Service gone", func() (bool, string) {
		got := userView(t, ns, "web", serviceGVK)
		return got == svcBefore && getObject(t, ns, "web-canary", serviceGVK) == nil, got
	})
	if got := podNames(t, ns, "web"); fmt.Sprint(got) != fmt.Sprint(stablePods) {
		t.Fatalf("the stable Deployment's pods changed: %v, were %v", got, stablePods)
	}

	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 6, v2))
	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 6, v2))
	assertStaysAborted(t, ns, "web", map[string]int{v1: 6}, deploymentImage(t, ns, "web"), v2)
	if c := canaryDeployments(t, ns, "web"); len(c) != 0 {
		t.Fatalf("a canary came back: %v", deploymentNames(c))
	}

	applyAs(t, fluxManager, deploymentManifest(ns, "web", 6, v1))
	waitRolledBack(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	if got := podNames(t, ns, "web"); fmt.Sprint(got) != fmt.Sprint(stablePods) {
		t.Fatalf("the stable Deployment's pods changed: %v, were %v", got, stablePods)
	}
}

// Given a blue-green release of a Deployment of 4 pods paused at step 1
// (2 new pods beside the 4 old ones)
// When the release is aborted
// Then the new pods go at once while all 4 old ones stay ready, the
// Deployment is held paused (no surge, the user's maxUnavailable and
// timing, so Kubernetes could finish it without downtime), its template
// still v2; re-applies change nothing; a retry releases v2 again from step
// 1 beside the old pods.
func TestAbort_blueGreenDeployment_dropsTheNewPods(t *testing.T) {
	ns := newNamespace(t)
	applyAs(t, fluxManager, deploymentManifest(ns, "web", 4, v1))
	waitDeploymentComplete(t, ns, "web", v1)
	ro := newRollout(ns, "web")
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps: []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
	}}
	createRollout(t, ro)
	applyAs(t, fluxManager, deploymentManifest(ns, "web", 4, v2))
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, "web", map[string]int{v1: 4, v2: 2})
	capacity := watchCapacity(t, ns, "web")

	requestAbort(t, ns, "web")
	waitAborted(t, ns, "web", 1)
	waitPods(t, ns, "web", map[string]int{v1: 4})
	if err := capacity.within(6, 4); err != nil {
		t.Fatalf("capacity while dropping the new pods: %v", err)
	}
	d := getDeployment(t, ns, "web")
	ru := d.Spec.Strategy.RollingUpdate
	if !d.Spec.Paused || ru == nil || ru.MaxSurge.IntValue() != 0 || ru.MaxUnavailable.IntValue() != 1 || d.Spec.MinReadySeconds != 0 {
		t.Fatalf("held deployment: paused %v strategy %+v minReadySeconds %d", d.Spec.Paused, d.Spec.Strategy, d.Spec.MinReadySeconds)
	}

	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 4, v2))
	reapplyAsGitOpsTools(t, deploymentManifest(ns, "web", 4, v2))
	assertStaysAborted(t, ns, "web", map[string]int{v1: 4}, deploymentImage(t, ns, "web"), v2)

	requestRetry(t, ns, "web")
	waitRollout(t, ns, "web", "v2 again at step 1", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 1 &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	waitPods(t, ns, "web", map[string]int{v1: 4, v2: 2})
	approveBlueGreen(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveBlueGreen(t, ns, "web")
	waitCompleted(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
}

// Given a release of a Deployment of 10 pods in place, paused at step 2
// (5 pods on v2), being aborted
// When sluice stops while the pods move back (some on v1, some on v2) and
// the documented recovery is applied by hand: the restore patch
// Then Kubernetes finishes the Deployment on its own, towards its template
// (v2, Git's), within maxSurge and maxUnavailable (never fewer than 8 of
// the 10 pods ready); when sluice comes back, it sees the release done
// outside it and completes the Rollout.
func TestAbort_deploymentInPlace_sluiceStoppedMidAbort_restorePatchFinishesWithoutDowntime(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, "web", map[string]int{v1: 5, v2: 5})

	requestAbort(t, ns, "web")
	eventually(t, "some pods back on v1, some still on v2", func() (bool, string) {
		got := podImages(t, ns, "web")
		return got[v1] > 5 && got[v2] > 0, fmt.Sprint(got)
	})
	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := startManager(ctxFor(t)); err != nil {
				t.Errorf("restarting sluice: %v", err)
			}
		}
	})
	capacity := watchCapacity(t, ns, "web")
	d := getDeployment(t, ns, "web")
	if !d.Spec.Paused {
		t.Fatalf("the Deployment is not paused mid-abort: %+v", d.Spec)
	}
	patch := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatalf("applying the restore patch: %v", err)
	}
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	if err := capacity.within(13, 8); err != nil {
		t.Fatalf("capacity while Kubernetes finished the Deployment: %v", err)
	}

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitRollout(t, ns, "web", "completed after restart", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	assertRestored(t, ns, "web")
}
