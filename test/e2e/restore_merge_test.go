package e2e

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic/gateway"
	"github.com/sluice-dev/sluice/traffic/lua"
	"github.com/sluice-dev/sluice/traffic/service"
)

// Given a Deployment of 4 pods labelled app=web, tier=front, the Service
// web selecting app=web and an HTTPRoute sending / to it, both applied by
// a GitOps tool, and a Rollout through the route: 20% / 50% / 100%
// When, while step 1 waits for approval, the GitOps tool applies a new
// revision of both manifests (the route gets a rule for /api, the Service
// a second port, a label and the narrower selector app=web, tier=front),
// a person annotates both, and the release is then approved to the end
// Then sluice keeps routing on top of those edits (the /api rule stays
// beside the weighted one, the stable Service stays narrowed with the new
// selector), and after the hand-back every edit is still there while
// everything sluice changed is gone: the rules are the new revision's,
// the selector is app=web, tier=front, and sluice owns nothing of either.
func TestRestoreMerge_httpRouteAndService_keepEditsMadeMidRelease(t *testing.T) {
	installGatewayAPI(t)
	ns := newNamespace(t)
	labelledDeployment(t, ns, "web", 4, v1, map[string]string{"app": "web", "tier": "front"})
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	httpRoute(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{viaHTTPRoute("web", "web")},
		trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", "100%")))

	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision
	if got := routeRules(t, ns, "web"); got != "[/ -> web:80,web-canary:20]" {
		t.Fatalf("step 1 rules: %s", got)
	}

	// The GitOps tool applies the next revision of the manifests.
	applyAs(t, userManager, map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"namespace": ns, "name": "web", "labels": map[string]any{"app": "web", "revision": "2"}},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "public"}},
			"hostnames":  []any{"shop.example"},
			"rules": []any{
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
					"backendRefs": []any{map[string]any{"name": "web", "port": int64(80)}},
				},
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/api"}}},
					"backendRefs": []any{map[string]any{"name": "api", "port": int64(8080)}},
				},
			},
		},
	})
	applyAs(t, userManager, map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": ns, "name": "web", "labels": map[string]any{"app": "web", "revision": "2"}, "annotations": map[string]any{"team": "shop"}},
		"spec": map[string]any{
			"type":     "ClusterIP",
			"selector": map[string]any{"app": "web", "tier": "front"},
			"ports": []any{
				map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)},
				map[string]any{"name": "metrics", "port": int64(9090), "targetPort": int64(9090)},
			},
		},
	})
	// A person annotates both.
	note := []byte(`{"metadata":{"annotations":{"checked-by":"oncall"}}}`)
	for _, obj := range []client.Object{getObject(t, ns, "web", httpRouteGVK), getObject(t, ns, "web", serviceGVK)} {
		if err := suite.c.Patch(ctxFor(t), obj, client.RawPatch(types.MergePatchType, note), client.FieldOwner("kubectl-annotate")); err != nil {
			t.Fatal(err)
		}
	}

	// sluice routes on top of the edits.
	narrowed := map[string]string{"app": "web", "tier": "front", "pod-template-hash": stable}
	eventually(t, "the route and the Service carry step 1 on top of the edits", func() (bool, string) {
		rules, sel := routeRules(t, ns, "web"), serviceSelector(t, ns, "web")
		return rules == "[/ -> web:80,web-canary:20] [/api -> api:1]" && maps.Equal(sel, narrowed), rules + " " + mapString(sel)
	})

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:50,web-canary:50] [/api -> api:1]" {
		t.Fatalf("step 2 rules: %s", got)
	}
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, narrowed) {
		t.Fatalf("step 2: stable Service selector %v, want %v", got, narrowed)
	}

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)

	route := getObject(t, ns, "web", httpRouteGVK)
	if got := routeRules(t, ns, "web"); got != "[/ -> web:1] [/api -> api:1]" {
		t.Errorf("rules after the release: %s, want the GitOps tool's two rules", got)
	}
	if route.GetLabels()["revision"] != "2" || route.GetAnnotations()["checked-by"] != "oncall" {
		t.Errorf("route labels %v annotations %v: an edit was lost", route.GetLabels(), route.GetAnnotations())
	}
	if _, ok := route.GetAnnotations()[gateway.RecordAnnotation]; ok {
		t.Errorf("annotation %s left on the route", gateway.RecordAnnotation)
	}
	svc := &corev1.Service{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"app": "web", "tier": "front"}; !maps.Equal(svc.Spec.Selector, want) {
		t.Errorf("stable Service selector after the release %v, want %v", svc.Spec.Selector, want)
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name)
	}
	if !slices.Equal(ports, []string{"http", "metrics"}) || svc.Labels["revision"] != "2" || svc.Annotations["checked-by"] != "oncall" {
		t.Errorf("Service ports %v labels %v annotations %v: an edit was lost", ports, svc.Labels, svc.Annotations)
	}
	if _, ok := svc.Annotations[service.RecordAnnotation]; ok {
		t.Errorf("annotation %s left on the Service", service.RecordAnnotation)
	}
	assertSluiceOwnsNothing(t, ns, "web", httpRouteGVK)
	assertSluiceOwnsNothing(t, ns, "web", serviceGVK)
	if got := selectedPods(t, ns, "web"); got[v2] != 4 || got[v1] != 0 {
		t.Errorf("the stable Service selects %v, want the 4 new pods", got)
	}
}

// Given a Deployment of 4 pods behind the Service web, an Istio
// VirtualService routing to it, and a Rollout shifting 25% of the traffic
// through it (customNetworkRefs, sluice's built-in script), then the
// remaining pods
// When, while step 1 waits for approval, a person edits the
// VirtualService (adds gateways, a route for /api in front, a label) and
// the release is approved to the end
// Then the next write and the hand-back keep the edits: after the release
// the spec is the one written before it plus the person's edits, with
// nothing of sluice's weights or record left.
func TestRestoreMerge_luaRoutedObject_keepsEditsMadeMidRelease(t *testing.T) {
	luaInstallCRD(t, "testdata/lua/networking.istio.io_virtualservices.yaml", luaVirtualService)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	luaService(t, ns, "web")
	luaCreate(t, ns, luaVirtualService, "web", `
metadata:
  labels: {team: shop}
spec:
  hosts: [web]
  http:
  - route:
    - destination: {host: web, port: {number: 80}}
`)
	createRollout(t, luaRollout(ns, "web", luaVirtualService, "web", luaStep("1", "25%", nil), luaStep("100%", "", nil)))

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	vs := luaAssertSpec(t, ns, luaVirtualService, "web", "step 1", `
hosts: [web]
http:
- route:
  - {destination: {host: web, port: {number: 80}}, weight: 75}
  - {destination: {host: web-canary, port: {number: 80}}, weight: 25}
`)

	// A person edits the VirtualService (kubectl edit: an update).
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	api := map[string]any{
		"match": []any{map[string]any{"uri": map[string]any{"prefix": "/api"}}},
		"route": []any{map[string]any{"destination": map[string]any{"host": "api", "port": map[string]any{"number": int64(8080)}}}},
	}
	if err := unstructured.SetNestedSlice(vs.Object, append([]any{api}, http...), "spec", "http"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedStringSlice(vs.Object, []string{"mesh"}, "spec", "gateways"); err != nil {
		t.Fatal(err)
	}
	labels := vs.GetLabels()
	labels["edited"] = "yes"
	vs.SetLabels(labels)
	if err := suite.c.Update(ctxFor(t), vs, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("editing the VirtualService mid-release: %v", err)
	}

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	got := luaAssertSpec(t, ns, luaVirtualService, "web", "after the release", `
hosts: [web]
gateways: [mesh]
http:
- match: [{uri: {prefix: /api}}]
  route: [{destination: {host: api, port: {number: 8080}}}]
- route:
  - destination: {host: web, port: {number: 80}}
`)
	if _, ok := got.GetAnnotations()[lua.OriginalAnnotation]; ok {
		t.Errorf("annotation %s left on the VirtualService", lua.OriginalAnnotation)
	}
	if got.GetLabels()["edited"] != "yes" || got.GetLabels()["team"] != "shop" {
		t.Errorf("labels %v: an edit was lost", got.GetLabels())
	}
}

// labelledDeployment creates a Deployment of replicas pods running image
// whose pods carry labels (it selects them all), and waits until they are
// all available.
func labelledDeployment(t *testing.T, ns, name string, replicas int32, image string, labels map[string]string) {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), d); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
	waitDeploymentComplete(t, ns, name, image)
}

func mapString(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ","
		}
		s += k + "=" + m[k]
	}
	return s + "}"
}
