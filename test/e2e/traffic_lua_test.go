package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/traffic/lua"
)

var (
	luaVirtualService = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
	luaSplit          = schema.GroupVersionKind{Group: "lua.e2e.sluice.dev", Version: "v1", Kind: "Split"}
)

// Given a Deployment of 4 pods behind the Service web, an Istio
// VirtualService routing to it, and a Rollout whose steps shift 25% of the
// traffic, then requests with a header, then all traffic, through the
// VirtualService (customNetworkRefs, sluice's built-in script), then the
// last pods without traffic routing
// When the image changes and each step is approved
// Then at each step the VirtualService carries exactly that step's routes
// and the pods run the step's revisions; at the end it is exactly as the
// user wrote it, with nothing of sluice left on it.
func TestTrafficLua_virtualService_followsEachStep_andIsRestored(t *testing.T) {
	luaInstallCRD(t, "testdata/lua/networking.istio.io_virtualservices.yaml", luaVirtualService)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	luaService(t, ns, "web")
	original := luaCreate(t, ns, luaVirtualService, "web", `
metadata:
  labels: {team: shop}
  annotations: {owner: shop-team}
spec:
  hosts: [web]
  http:
  - route:
    - destination: {host: web, port: {number: 80}}
`)
	header := rolloutsv1beta1.HTTPHeaderMatch{Name: "x-canary", Value: "yes"}
	createRollout(t, luaRollout(ns, "web", luaVirtualService, "web",
		luaStep("1", "25%", nil),
		luaStep("2", "", []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{header}}}),
		luaStep("3", "100%", nil),
		luaStep("100%", "", nil)))
	if got := luaGet(t, ns, luaVirtualService, "web"); !apiequality.Semantic.DeepEqual(got.Object["spec"], original.Object["spec"]) {
		t.Fatalf("before the release: spec %v changed", got.Object["spec"])
	}

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	luaAssertPods(t, ns, 1, 3)
	vs := luaAssertSpec(t, ns, luaVirtualService, "web", "step 1", `
hosts: [web]
http:
- route:
  - destination: {host: web, port: {number: 80}}
    weight: 75
  - destination: {host: web-canary, port: {number: 80}}
    weight: 25
`)
	luaAssertRecorded(t, vs, original)

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	luaAssertPods(t, ns, 2, 2)
	vs = luaAssertSpec(t, ns, luaVirtualService, "web", "step 2", `
hosts: [web]
http:
- match: [{headers: {x-canary: {exact: "yes"}}}]
  route: [{destination: {host: web-canary, port: {number: 80}}}]
- route:
  - destination: {host: web, port: {number: 80}}
`)
	luaAssertRecorded(t, vs, original)

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	luaAssertPods(t, ns, 3, 1)
	luaAssertSpec(t, ns, luaVirtualService, "web", "step 3", `
hosts: [web]
http:
- route:
  - destination: {host: web, port: {number: 80}}
    weight: 0
  - destination: {host: web-canary, port: {number: 80}}
    weight: 100
`)

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	got := luaGet(t, ns, luaVirtualService, "web")
	if !apiequality.Semantic.DeepEqual(got.Object["spec"], original.Object["spec"]) {
		t.Errorf("after the release: spec %v, want %v", got.Object["spec"], original.Object["spec"])
	}
	if !apiequality.Semantic.DeepEqual(got.GetAnnotations(), original.GetAnnotations()) || !apiequality.Semantic.DeepEqual(got.GetLabels(), original.GetLabels()) {
		t.Errorf("after the release: labels %v annotations %v, want %v %v", got.GetLabels(), got.GetAnnotations(), original.GetLabels(), original.GetAnnotations())
	}
}

// Given a route kind sluice has no script for, whose script in the
// ConfigMap kruise-rollout-configuration raises an error
// When a release reaches a step with traffic
// Then the step's pods are upgraded, the route is left untouched, the
// Rollout's TrafficRouted condition carries the script's message and the
// release does not go past the traffic; once the script is fixed the
// release goes on, and at the end the route is given back.
func TestTrafficLua_scriptError_surfacesAsConditionAndHoldsTheRelease(t *testing.T) {
	luaInstallCRD(t, "testdata/lua/lua.e2e.sluice.dev_splits.yaml", luaSplit)
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	luaService(t, ns, "web")
	key := lua.ScriptKey(luaSplit.GroupKind())
	luaSetScript(t, key, `error("split " .. obj.stableService .. ": weight " .. obj.canaryWeight .. " is not allowed")`)
	original := luaCreate(t, ns, luaSplit, "web", `
spec:
  backends: [{service: web, weight: 100}]
`)
	createRollout(t, luaRollout(ns, "web", luaSplit, "web", luaStep("1", "20%", nil), luaStep("100%", "", nil)))

	setImage(t, ns, "web", v2)
	const message = "split web: weight 20 is not allowed"
	ro := waitRollout(t, ns, "web", "the script's error", func(ro *rolloutsv1beta1.Rollout) bool {
		c := condition(ro, canary.TrafficRoutedCondition)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, message)
	})
	if c := condition(ro, canary.TrafficRoutedCondition); c.Reason != "RoutingFailed" || !strings.Contains(c.Message, key) {
		t.Fatalf("TrafficRouted %+v, want reason RoutingFailed naming the script %s", c, key)
	}
	t.Logf("TrafficRouted: %s", condition(ro, canary.TrafficRoutedCondition).Message)
	luaAssertPods(t, ns, 1, 3)
	// The controller keeps retrying; the release stays at the traffic of
	// step 1 and the route stays as it was.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		ro = getRollout(t, ns, "web")
		if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateTrafficRouting {
			t.Fatalf("the release went on past a failing script: %s", describe(ro))
		}
		got := luaGet(t, ns, luaSplit, "web")
		if _, ok := got.GetAnnotations()[lua.OriginalAnnotation]; ok || !apiequality.Semantic.DeepEqual(got.Object["spec"], original.Object["spec"]) {
			t.Fatalf("a failing script changed the route: %v %v", got.GetAnnotations(), got.Object["spec"])
		}
		time.Sleep(200 * time.Millisecond)
	}

	luaSetScript(t, key, `
obj.data.spec.backends = {
  {service = obj.stableService, weight = obj.stableWeight},
  {service = obj.canaryService, weight = obj.canaryWeight},
}
return obj.data`)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	luaAssertPods(t, ns, 1, 3)
	split := luaAssertSpec(t, ns, luaSplit, "web", "step 1 with the fixed script",
		"backends: [{service: web, weight: 80}, {service: web-canary, weight: 20}]")
	luaAssertRecorded(t, split, original)
	if c := condition(getRollout(t, ns, "web"), canary.TrafficRoutedCondition); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("TrafficRouted %+v after the fix, want True", c)
	}

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	got := luaGet(t, ns, luaSplit, "web")
	if _, ok := got.GetAnnotations()[lua.OriginalAnnotation]; ok || !apiequality.Semantic.DeepEqual(got.Object["spec"], original.Object["spec"]) {
		t.Fatalf("after the release: annotations %v spec %v, want the original spec %v", got.GetAnnotations(), got.Object["spec"], original.Object["spec"])
	}
}

// luaRollout builds a Rollout of the Deployment name whose traffic goes
// through the Service name and the custom object gvk/route.
func luaRollout(ns, name string, gvk schema.GroupVersionKind, route string, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	ro := newRollout(ns, name, steps...)
	ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{
		Service:            name,
		GracePeriodSeconds: 1,
		CustomNetworkRefs:  []rolloutsv1beta1.ObjectRef{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: route}},
	}}
	return ro
}

// luaStep is a step of replicas that waits for approval, with traffic
// ("" for none) and matches.
func luaStep(replicas, traffic string, matches []rolloutsv1beta1.HttpRouteMatch) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	s := rolloutsv1beta1.CanaryStep{Replicas: &r}
	if traffic != "" {
		s.Traffic = &traffic
	}
	s.Matches = matches
	return s
}

// luaInstallCRD creates the CRD in file (once per control plane) and
// waits until gvk is served.
func luaInstallCRD(t *testing.T, file string, gvk schema.GroupVersionKind) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := suite.c.Create(ctxFor(t), u); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating CRD %s: %v", u.GetName(), err)
	}
	eventually(t, "CRD "+u.GetName()+" served", func() (bool, string) {
		_, err := suite.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, err.Error()
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err = suite.c.List(ctxFor(t), list)
		return err == nil, fmt.Sprint(err)
	})
}

// luaService creates the Service name selecting the pods of app name.
func luaService(t *testing.T, ns, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if err := suite.c.Create(ctxFor(t), svc); err != nil {
		t.Fatalf("creating Service %s: %v", name, err)
	}
}

// luaCreate creates the object gvk/name from its YAML (metadata and spec),
// as a user would, and returns it as stored.
func luaCreate(t *testing.T, ns string, gvk schema.GroupVersionKind, name, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	if err := suite.c.Create(ctxFor(t), u, client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("creating %s %s: %v", gvk.Kind, name, err)
	}
	return luaGet(t, ns, gvk, name)
}

func luaGet(t *testing.T, ns string, gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("reading %s %s: %v", gvk.Kind, name, err)
	}
	return u
}

// luaAssertSpec checks that the object's spec is want (YAML) and returns
// the object.
func luaAssertSpec(t *testing.T, ns string, gvk schema.GroupVersionKind, name, when, want string) *unstructured.Unstructured {
	t.Helper()
	u := luaGet(t, ns, gvk, name)
	var w any
	if err := yaml.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(u.Object["spec"])
	wb, _ := json.Marshal(w)
	var g, ww any
	_ = json.Unmarshal(gb, &g)
	_ = json.Unmarshal(wb, &ww)
	if !apiequality.Semantic.DeepEqual(g, ww) {
		t.Fatalf("%s: %s spec\n%s\nwant\n%s", when, gvk.Kind, gb, wb)
	}
	return u
}

// luaAssertRecorded checks that u records original's spec, labels and
// annotations, and keeps its own labels and annotations meanwhile.
func luaAssertRecorded(t *testing.T, u, original *unstructured.Unstructured) {
	t.Helper()
	raw, ok := u.GetAnnotations()[lua.OriginalAnnotation]
	if !ok {
		t.Fatalf("%s %s has no annotation %s", u.GetKind(), u.GetName(), lua.OriginalAnnotation)
	}
	var rec struct {
		Spec        any               `json:"spec"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		t.Fatalf("annotation %s: %v", lua.OriginalAnnotation, err)
	}
	ob, _ := json.Marshal(original.Object["spec"])
	rb, _ := json.Marshal(rec.Spec)
	if string(ob) != string(rb) {
		t.Fatalf("recorded spec %s, want %s", rb, ob)
	}
	if !apiequality.Semantic.DeepEqual(rec.Labels, original.GetLabels()) || !apiequality.Semantic.DeepEqual(rec.Annotations, original.GetAnnotations()) {
		t.Fatalf("recorded labels %v annotations %v, want %v %v", rec.Labels, rec.Annotations, original.GetLabels(), original.GetAnnotations())
	}
	if !apiequality.Semantic.DeepEqual(u.GetLabels(), original.GetLabels()) {
		t.Fatalf("labels %v changed during the release, want %v", u.GetLabels(), original.GetLabels())
	}
	for k, v := range original.GetAnnotations() {
		if u.GetAnnotations()[k] != v {
			t.Fatalf("annotation %s changed during the release", k)
		}
	}
}

// luaAssertPods checks the pods of app web by image.
func luaAssertPods(t *testing.T, ns string, updated, old int) {
	t.Helper()
	if got := podImages(t, ns, "web"); got[v2] != updated || got[v1] != old {
		t.Fatalf("pods by image %v, want %d new and %d old", got, updated, old)
	}
}

// luaSetScript sets the script of key in the ConfigMap of scripts in the
// manager's namespace, and removes it when the test ends.
func luaSetScript(t *testing.T, key, script string) {
	t.Helper()
	ctx := ctxFor(t)
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = lua.DefaultNamespace
	}
	if err := suite.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lua.ConfigMapName}}
	if err := suite.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating ConfigMap %s: %v", lua.ConfigMapName, err)
	}
	patch := func(ctx context.Context, value any) error {
		b, _ := json.Marshal(map[string]any{"data": map[string]any{key: value}})
		return suite.c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, b))
	}
	if err := patch(ctx, script); err != nil {
		t.Fatalf("setting script %s: %v", key, err)
	}
	t.Cleanup(func() { _ = patch(context.Background(), nil) })
}
