package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// revertDeadline is how soon sluice must correct a route changed behind
// its back while a step waits for approval: well under any periodic
// resync, so only a watch of the route meets it.
const revertDeadline = 10 * time.Second

// Given the nginx Ingress release of TestTraffic_nginxIngress_canarySteps
// paused at step 1 (20%), waiting for approval
// When a GitOps sync sets the canary Ingress's weight back to 0
// Then sluice sets it to 20 again within revertDeadline, and the step
// stays paused with its pods (1 new, 4 stable selected) unchanged.
func TestTraffic_gitOpsRevertsCanaryWeight_sluiceRestoresIt(t *testing.T) {
	ns := newNamespace(t)
	ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})

	// The sync: another manager writes weight 0 on the canary Ingress.
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{nginxPrefix + "canary-weight": "0"}}})
	ing := &networkingv1.Ingress{}
	ing.Namespace, ing.Name = ns, "web-canary"
	if err := suite.c.Patch(ctxFor(t), ing, client.RawPatch(types.MergePatchType, b), client.FieldOwner(userManager)); err != nil {
		t.Fatalf("reverting the canary weight: %v", err)
	}
	if got := canaryAnnotations(t, ns, "web")["canary-weight"]; got != "0" {
		t.Fatalf("canary weight after the revert %q, want 0", got)
	}

	var last string
	err := wait.PollUntilContextTimeout(ctxFor(t), 100*time.Millisecond, revertDeadline, true, func(context.Context) (bool, error) {
		last = canaryAnnotations(t, ns, "web")["canary-weight"]
		return last == "20", nil
	})
	if err != nil {
		t.Fatalf("canary weight not restored within %s: %q", revertDeadline, last)
	}
	ro := getRollout(t, ns, "web")
	if cs := ro.Status.CanaryStatus; cs.CurrentStepIndex != 1 || cs.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("the Rollout moved: %s", describe(ro))
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
}

// Given a Deployment of 4 pods behind a Service and an HTTPRoute (its CRD
// installed after sluice started) and a canary-style Rollout routing
// through the HTTPRoute, paused at step 1 (20%) waiting for approval
// When a GitOps sync applies the route as written in Git (one backend, no
// weights), taking spec.rules back
// Then sluice puts the weights back within revertDeadline, and the step
// stays paused with its pods unchanged.
func TestTraffic_gitOpsRevertsHTTPRouteWeights_sluiceRestoresThem(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	before := routeRules(t, ns, "web")
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), trafficStep("100%", "100%")))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	weighted := routeRules(t, ns, "web")
	if want := "[/ -> web:80,web-canary:20]"; weighted != want {
		t.Fatalf("rules at step 1 %s, want %s", weighted, want)
	}

	httpRoute(t, ns, "web", "web") // the sync
	if got := routeRules(t, ns, "web"); got != before {
		t.Fatalf("rules after the sync %s, want %s", got, before)
	}

	var last string
	err := wait.PollUntilContextTimeout(ctxFor(t), 100*time.Millisecond, revertDeadline, true, func(context.Context) (bool, error) {
		last = routeRules(t, ns, "web")
		return last == weighted, nil
	})
	if err != nil {
		t.Fatalf("weights not restored within %s: %s", revertDeadline, last)
	}
	ro := getRollout(t, ns, "web")
	if cs := ro.Status.CanaryStatus; cs.CurrentStepIndex != 1 || cs.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("the Rollout moved: %s", describe(ro))
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
}
