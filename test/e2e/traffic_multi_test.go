package e2e

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment behind a Service reached both through an nginx
// Ingress and an HTTPRoute, and a canary-style Rollout with one
// trafficRoutings entry for each: 20% / 100%
// When the image changes and the release is approved
// Then when step 1 pauses both routes already send 20% to the canary, and
// at the end both are restored.
func TestTraffic_ingressAndHTTPRoute_convergeTogether(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	httpRoute(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web"), viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), trafficStep("100%", "100%")))
	svcBefore, ingBefore, rulesBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK), rulesJSON(t, ns, "web")

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	ing, route := canaryAnnotations(t, ns, "web"), routeRules(t, ns, "web")
	if !maps.Equal(ing, map[string]string{"canary": "true", "canary-weight": "20"}) || route != "[/ -> web:80,web-canary:20]" {
		t.Fatalf("step 1 paused with the Ingress at %v and the route at %s", ing, route)
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("rules after the release:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	assertSluiceOwnsNothing(t, ns, "web", httpRouteGVK)
}

// Given a Deployment of 4 pods behind a Service and an nginx Ingress, and
// an in-place (multi-batch) Rollout: 1 pod 20% / 50% 50% / 100%
// When the image changes and every step is approved
// Then the stable Service selects the old pods by pod-template-hash and
// the canary Service the new ones, as the pods are replaced in place; at
// the end everything is as before.
func TestTraffic_inPlaceDeployment_stableServiceNarrowedByHash(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")},
		trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", "")))
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)

	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	cs := ro.Status.CanaryStatus
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, map[string]string{"app": "web", "pod-template-hash": cs.StableRevision}) {
		t.Fatalf("stable Service selector %v, stable revision %s", got, cs.StableRevision)
	}
	if got := podsWithHash(t, ns, "web", cs.StableRevision); !maps.Equal(got, map[string]int{v1: 3}) {
		t.Fatalf("pods of the stable hash %v", got)
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 3})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 2})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}

// Given a Deployment and an nginx Ingress
// When a Rollout asks nginx to match two headers at once, which its
// canary annotations cannot express
// Then it is rejected at admission, the message naming the step's matches
// and the trafficRoutings entry.
func TestTraffic_unexpressibleMatch_rejectedAtAdmission(t *testing.T) {
	ns := newNamespace(t)
	both := rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user-agent", Value: "pc"}, {Name: "x-user", Value: "beta"}}}
	ro := trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")}, trafficStep("1", "", both), trafficStep("100%", ""))
	err := suite.c.Create(ctxFor(t), ro)
	if err == nil {
		t.Fatal("the Rollout was accepted")
	}
	for _, want := range []string{"spec.strategy.canary.steps[0].matches", "trafficRoutings[0]", "ingress web (class nginx)"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	}
	if getObject(t, ns, "web", rolloutsv1beta1.GroupVersion.WithKind("Rollout")) != nil {
		t.Fatal("the Rollout was stored")
	}
}

// Given a StatefulSet of 4 pods behind a Service and an nginx Ingress, and
// a Rollout (in place, by partition): 1 pod 20% / 50% 50% / 100%
// When the image changes and every step is approved
// Then the stable Service selects the old pods by controller-revision-hash
// and the canary Service the new ones as the partition moves; at the end
// the Service and Ingress are as before.
func TestTraffic_statefulSet_stableServiceNarrowedByRevisionHash(t *testing.T) {
	ns := newNamespace(t)
	k := nativeStatefulSet
	createWorkload(t, k, ns, "web", 4, v1, 4)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	ro := rolloutFor(k, ns, "web", trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", ""))
	route := viaIngress("web", "web")
	route.GracePeriodSeconds = 1
	ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{route}
	createRollout(t, ro)
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)

	setWorkloadImage(t, k, ns, "web", v2)
	ro = waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	cs := ro.Status.CanaryStatus
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, map[string]string{"app": "web", "controller-revision-hash": cs.StableRevision}) {
		t.Fatalf("stable Service selector %v, stable revision %s", got, cs.StableRevision)
	}
	if got := serviceSelector(t, ns, "web-canary"); !maps.Equal(got, map[string]string{"app": "web", "controller-revision-hash": cs.CanaryRevision}) {
		t.Fatalf("canary Service selector %v, canary revision %s", got, cs.CanaryRevision)
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 3})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 2})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	approveByStatus(t, ns, "web")
	waitCompleted(t, ns, "web")
	waitPods(t, ns, "web", map[string]int{v2: 4})
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}
