package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// routeRules renders the rules of the HTTPRoute name compactly: per rule
// its matches, backendRefs with weights, and header modifiers.
func routeRules(t *testing.T, ns, name string) string {
	t.Helper()
	u := getObject(t, ns, name, httpRouteGVK)
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var out []string
	for _, r := range rules {
		rule := r.(map[string]any)
		var ms, bs []string
		matches, _, _ := unstructured.NestedSlice(rule, "matches")
		for _, m := range matches {
			s, _, _ := unstructured.NestedString(m.(map[string]any), "path", "value")
			hs, _, _ := unstructured.NestedSlice(m.(map[string]any), "headers")
			for _, h := range hs {
				s += fmt.Sprintf(" %s=%s", h.(map[string]any)["name"], h.(map[string]any)["value"])
			}
			ms = append(ms, s)
		}
		refs, _, _ := unstructured.NestedSlice(rule, "backendRefs")
		for _, b := range refs {
			ref := b.(map[string]any)
			s := fmt.Sprintf("%s:%v", ref["name"], ref["weight"])
			if f, ok := ref["filters"]; ok {
				j, _ := json.Marshal(f)
				s += string(j)
			}
			bs = append(bs, s)
		}
		f := ""
		if filters, ok := rule["filters"]; ok {
			j, _ := json.Marshal(filters)
			f = " " + string(j)
		}
		out = append(out, "["+strings.Join(ms, "|")+" -> "+strings.Join(bs, ",")+f+"]")
	}
	return strings.Join(out, " ")
}

func rulesJSON(t *testing.T, ns, name string) string {
	t.Helper()
	rules, _, _ := unstructured.NestedSlice(getObject(t, ns, name, httpRouteGVK).Object, "spec", "rules")
	b, _ := json.Marshal(rules)
	return string(b)
}

// Given a Deployment of 4 pods behind a Service and an HTTPRoute applied
// by a GitOps tool (server-side apply), and a canary-style Rollout routing
// through the HTTPRoute: 20% / header x-user=beta with a request header
// set / 50% / 100%
// When the image changes, the route's hostnames are changed by another
// field manager mid-release, and every step is approved
// Then at each step the route's rules carry the weights on backendRefs or
// a rule in front for the match (with the requestHeaderModifier), sluice
// owns spec.rules and nothing else while the release runs, the other
// manager's change survives, and at the end the rules are exactly as
// before and sluice owns nothing of the route.
func TestTraffic_httpRoute_weightsMatchesAndFieldOwnership(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	match := trafficStep("1", "", headerMatch("x-user", "beta"))
	match.RequestHeaderModifier = &rolloutsv1beta1.HTTPHeaderFilter{Set: []rolloutsv1beta1.HTTPHeader{{Name: "x-canary", Value: "true"}}}
	createRollout(t, trafficRollout(ns, "web", true, []rolloutsv1beta1.TrafficRoutingRef{viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), match, trafficStep("50%", "50%"), trafficStep("100%", "100%")))
	rulesBefore, svcBefore := rulesJSON(t, ns, "web"), userView(t, ns, "web", serviceGVK)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:1]" {
		t.Fatalf("route before the release: %s", got)
	}

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:80,web-canary:20]" {
		t.Fatalf("step 1 rules: %s", got)
	}
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	route := getObject(t, ns, "web", httpRouteGVK)
	for path, want := range map[string]string{"rules": "sluice/Apply", "parentRefs": userManager + "/Apply", "hostnames": userManager + "/Apply"} {
		if got := managersOf(route, "spec", path); !slices.Equal(got, []string{want}) {
			t.Fatalf("spec.%s managed by %v, want %s", path, got, want)
		}
	}
	if got := managersOf(route, "metadata", "labels"); !slices.Equal(got, []string{userManager + "/Apply"}) {
		t.Fatalf("labels managed by %v", got)
	}

	// Another manager changes the hostnames mid-release.
	patch := []byte(`{"spec":{"hostnames":["shop.example","www.shop.example"]}}`)
	if err := suite.c.Patch(ctxFor(t), route, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	want := `[/ x-user=beta -> web-canary:1 [{"requestHeaderModifier":{"set":[{"name":"x-canary","value":"true"}]},"type":"RequestHeaderModifier"}]] [/ -> web:1]`
	if got := routeRules(t, ns, "web"); got != want {
		t.Fatalf("step 2 rules:\n%s\nwant:\n%s", got, want)
	}

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:50,web-canary:50]" {
		t.Fatalf("step 3 rules: %s", got)
	}
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 4})

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("rules after the release:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	route = getObject(t, ns, "web", httpRouteGVK)
	if h, _, _ := unstructured.NestedStringSlice(route.Object, "spec", "hostnames"); !slices.Equal(h, []string{"shop.example", "www.shop.example"}) {
		t.Fatalf("hostnames %v: the other manager's change was lost", h)
	}
	if a := route.GetAnnotations(); len(a) != 0 {
		t.Fatalf("annotations left on the route: %v", a)
	}
	assertSluiceOwnsNothing(t, ns, "web", httpRouteGVK)
	if got := userView(t, ns, "web", serviceGVK); got != svcBefore {
		t.Fatalf("stable Service after the release:\n%s\nbefore:\n%s", got, svcBefore)
	}
	if getObject(t, ns, "web-canary", serviceGVK) != nil {
		t.Fatal("canary Service left")
	}
}

// Given a Deployment of 4 pods behind a Service and an HTTPRoute, and a
// blue-green Rollout through the route: 50% of the pods with no traffic,
// then with 50% of the requests, then all pods and all traffic
// When the image changes and the steps are approved
// Then the new pods run beside all the old ones, the canary Service
// selects them and the route's weights follow the steps; at the end the
// old pods are gone, the route's rules and the stable Service are as
// before, and the canary Service is gone.
func TestTraffic_blueGreenDeployment_httpRoute(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	ro := newRollout(ns, "web")
	route := viaHTTPRoute("web", "web")
	route.GracePeriodSeconds = 1
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps:           []rolloutsv1beta1.CanaryStep{trafficStep("50%", "0%"), trafficStep("50%", "50%"), trafficStep("100%", "100%")},
		TrafficRoutings: []rolloutsv1beta1.TrafficRoutingRef{route},
	}}
	createRollout(t, ro)
	rulesBefore, svcBefore := rulesJSON(t, ns, "web"), userView(t, ns, "web", serviceGVK)

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:100,web-canary:0]" {
		t.Fatalf("step 1 rules: %s", got)
	}
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 4})

	approveBlueGreen(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:50,web-canary:50]" {
		t.Fatalf("step 2 rules: %s", got)
	}
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 4})

	approveBlueGreen(t, ns, "web")
	// The last step pauses too, with every request on the new pods and
	// every old pod still running: the instant way back until approved.
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:0,web-canary:100]" {
		t.Fatalf("step 3 rules: %s", got)
	}
	if pods := podImages(t, ns, "web"); pods[v1] != 4 || pods[v2] != 4 {
		t.Fatalf("step 3: pods by image %v, want 4 old and 4 new", pods)
	}
	approveBlueGreen(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	if got := rulesJSON(t, ns, "web"); got != rulesBefore {
		t.Fatalf("rules after the release:\n%s\nbefore:\n%s", got, rulesBefore)
	}
	if got := userView(t, ns, "web", serviceGVK); got != svcBefore {
		t.Fatalf("stable Service after the release:\n%s\nbefore:\n%s", got, svcBefore)
	}
	eventually(t, "canary Service gone", func() (bool, string) {
		return getObject(t, ns, "web-canary", serviceGVK) == nil, ""
	})
	assertSluiceOwnsNothing(t, ns, "web", httpRouteGVK)
	assertSluiceOwnsNothing(t, ns, "web", serviceGVK)
	assertRestored(t, ns, "web")
}
