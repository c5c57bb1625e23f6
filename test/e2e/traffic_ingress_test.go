package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// ingressRelease creates the app web (4 pods on v1, its Service and nginx
// Ingress) and a canary-style Rollout through the Ingress: 20% / a header
// match / 50% / 100%. It returns the Service's and Ingress's user view.
func ingressRelease(t *testing.T, ns string) (svcBefore, ingBefore string) {
	t.Helper()
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeNodePort)
	nginxIngress(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")},
		trafficStep("1", "20%"), trafficStep("1", "", headerMatch("user-agent", "pc")), trafficStep("50%", "50%"), trafficStep("100%", "100%")))
	return userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)
}

// Given a Deployment of 4 pods behind a NodePort Service and an nginx
// Ingress, and a canary-style Rollout routing through the Ingress with
// steps 20% / header user-agent=pc / 50% / 100%
// When the image changes and every step is approved
// Then at each step the canary Service selects exactly the new pods, the
// stable Service only the old ones, and <ingress>-canary carries the
// step's weight or header; nothing is routed to the canary before its pods
// are ready; at the end the canary Ingress and Service are gone and the
// stable Service and Ingress are as they were, sluice owning nothing of
// them.
func TestTraffic_nginxIngress_canarySteps(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	monitor := watchRouting(t, ns, "web")
	setImage(t, ns, "web", v2)

	// Step 1: 1 new pod, 20% of the requests.
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	cs := ro.Status.CanaryStatus
	if got := serviceSelector(t, ns, "web-canary"); !maps.Equal(got, map[string]string{"app": "web", "pod-template-hash": cs.PodTemplateHash}) {
		t.Fatalf("canary Service selector %v (canary hash %s)", got, cs.PodTemplateHash)
	}
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, map[string]string{"app": "web", "pod-template-hash": cs.StableRevision}) {
		t.Fatalf("stable Service selector %v (stable revision %s)", got, cs.StableRevision)
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
	canary := getObject(t, ns, "web-canary", serviceGVK)
	for _, p := range canary.Object["spec"].(map[string]any)["ports"].([]any) {
		stablePort := getObject(t, ns, "web", serviceGVK).Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"]
		if np := p.(map[string]any)["nodePort"]; np == nil || np == stablePort {
			t.Fatalf("canary NodePort %v, stable %v", np, stablePort)
		}
	}

	// Step 2: the header match alone.
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-by-header": "user-agent", "canary-by-header-value": "pc"})

	// Step 3: 2 new pods, 50%.
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	// Step 4, then the end: routing removed, the stable Deployment on v2.
	approveByStatus(t, ns, "web")
	ro = waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "True" {
		t.Fatalf("Succeeded %+v", c)
	}
	waitDeploymentComplete(t, ns, "web", v2)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	assertNeverRoutedToUnreadyPods(t, monitor.snapshots())
}

// assertSelected checks the ready pods the canary and stable Services web
// select, by image.
func assertSelected(t *testing.T, ns string, canary, stable map[string]int) {
	t.Helper()
	if got := selectedPods(t, ns, "web-canary"); !maps.Equal(got, canary) {
		t.Fatalf("canary Service selects %v, want %v", got, canary)
	}
	if got := selectedPods(t, ns, "web"); !maps.Equal(got, stable) {
		t.Fatalf("stable Service selects %v, want %v", got, stable)
	}
}

// assertTrafficRestored checks that the canary Ingress and Service of web
// are gone and the stable ones are exactly as before, owned as before.
func assertTrafficRestored(t *testing.T, ns, svcBefore, ingBefore string) {
	t.Helper()
	eventually(t, "canary Ingress and Service gone", func() (bool, string) {
		i, s := getObject(t, ns, "web-canary", ingressGVK), getObject(t, ns, "web-canary", serviceGVK)
		return i == nil && s == nil, "ingress " + fmtBool(i != nil) + ", service " + fmtBool(s != nil)
	})
	if got := userView(t, ns, "web", serviceGVK); got != svcBefore {
		t.Fatalf("stable Service after the release:\n%s\nbefore:\n%s", got, svcBefore)
	}
	if got := userView(t, ns, "web", ingressGVK); got != ingBefore {
		t.Fatalf("stable Ingress after the release:\n%s\nbefore:\n%s", got, ingBefore)
	}
	assertSluiceOwnsNothing(t, ns, "web", serviceGVK)
	assertSluiceOwnsNothing(t, ns, "web", ingressGVK)
	if got := managersOf(getObject(t, ns, "web", serviceGVK), "spec", "selector"); strings.Join(got, ",") != userManager+"/Apply" && strings.Join(got, ",") != "sluice-handback/Update" {
		t.Fatalf("the stable Service's selector is managed by %v", got)
	}
}

func fmtBool(b bool) string {
	if b {
		return "present"
	}
	return "absent"
}

// Given the nginx Ingress release of TestTraffic_nginxIngress_canarySteps
// paused at step 3 (50%)
// When the image is set back to v1
// Then the requests go back to the stable pods first (the canary Ingress
// is removed while the stable Service still selects only the old pods),
// the stable Service is given back its selector only once no new pod is
// left, and everything ends as before the release.
func TestTraffic_nginxIngress_rollbackRoutesToStableFirst(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})
	narrowed := map[string]string{"app": "web", "pod-template-hash": ro.Status.CanaryStatus.StableRevision}

	monitor := watchRouting(t, ns, "web")
	setImage(t, ns, "web", v1)
	waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Reason == "RolledBack"
	})
	waitDeploymentComplete(t, ns, "web", v1)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 4}})

	seen := monitor.snapshots()
	lastRouted, firstRestored := -1, -1
	for i, s := range seen {
		if s.canaryIngress {
			lastRouted = i
		}
		if firstRestored < 0 && maps.Equal(s.stableSelector, map[string]string{"app": "web"}) {
			firstRestored = i
			if s.images[v2] != 0 {
				t.Fatalf("snapshot %d: the stable Service was restored while %d new pods ran", i, s.images[v2])
			}
		}
		if firstRestored < 0 && !maps.Equal(s.stableSelector, narrowed) {
			t.Fatalf("snapshot %d: stable Service selector %v during the rollback", i, s.stableSelector)
		}
	}
	if lastRouted < 0 || firstRestored < 0 || lastRouted >= firstRestored {
		t.Fatalf("canary Ingress last seen at snapshot %d, stable Service restored at %d, of %d: routes must go back first", lastRouted, firstRestored, len(seen))
	}
}

// Given the nginx Ingress release paused at step 2 (the header match)
// When the Rollout is deleted
// Then the routing is removed and the Services restored before the
// Deployment is handed back, and the Rollout goes away.
func TestTraffic_nginxIngress_rolloutDeletedMidRelease(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-by-header": "user-agent", "canary-by-header-value": "pc"})

	monitor := watchRouting(t, ns, "web")
	if err := suite.c.Delete(ctxFor(t), getRollout(t, ns, "web")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout gone", func() (bool, string) {
		return getObject(t, ns, "web", rolloutsv1beta1.GroupVersion.WithKind("Rollout")) == nil, ""
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	for i, s := range monitor.snapshots() {
		if s.images[v1] < 4 && (s.canaryIngress || !maps.Equal(s.stableSelector, map[string]string{"app": "web"})) {
			t.Fatalf("snapshot %d: the Deployment was handed back (pods %v) before the routing was removed (canary Ingress %v, stable selector %v)",
				i, s.images, s.canaryIngress, s.stableSelector)
		}
	}
}

// Given the app web behind an nginx Ingress and a canary-style Rollout of
// 1 pod with 20% of the requests, then 100%
// When the new revision's pods cannot be scheduled at first (their node
// selector matches no node), then can
// Then while the canary pod is pending the step stays in StepUpgrade with
// no request routed to it (the stable Service already narrowed to the old
// pods); once the pod is ready, 20% goes to it.
func TestTraffic_nothingRoutedBeforeTheCanaryPodsAreReady(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")},
		trafficStep("1", "20%"), trafficStep("100%", "100%")))
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)

	pool := "sluice-e2e-pool-" + ns
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"nodeSelector":{%q:"yes"},"containers":[{"name":"app","image":%q}]}}}}`, pool, v2)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStateUpgrade)
	eventually(t, "a pending canary pod", func() (bool, string) {
		imgs := podImages(t, ns, "web")
		return imgs[v2] == 1, fmt.Sprint(imgs)
	})
	narrowed := map[string]string{"app": "web", "pod-template-hash": ro.Status.CanaryStatus.StableRevision}
	// Three grace periods.
	holdsFor(t, 3*time.Second, func() string {
		if a := canaryAnnotations(t, ns, "web"); a["canary-weight"] != "" && a["canary-weight"] != "0" {
			return fmt.Sprintf("requests routed to a pending canary pod: %v", a)
		}
		if got := getRollout(t, ns, "web"); got.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
			return "the step moved on with its pod pending: " + describe(got)
		}
		return ""
	})
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, narrowed) {
		t.Fatalf("stable Service selector %v while the canary pod is pending, want %v", got, narrowed)
	}

	labelNodes(t, pool)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}

// labelNodes labels every fake node key=yes until the test ends.
func labelNodes(t *testing.T, key string) {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := suite.c.List(ctxFor(t), nodes); err != nil {
		t.Fatal(err)
	}
	set := func(value any) {
		for i := range nodes.Items {
			b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: value}}})
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodes.Items[i].Name}}
			if err := suite.c.Patch(context.Background(), n, client.RawPatch(types.MergePatchType, b)); err != nil {
				t.Errorf("labelling node %s: %v", n.Name, err)
			}
		}
	}
	set("yes")
	t.Cleanup(func() { set(nil) })
}
