package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// nginxPrefix is the prefix of nginx's canary annotations.
const nginxPrefix = "nginx.ingress.kubernetes.io/"

// userManager is the field manager the scenarios write the user's
// Services, Ingresses and routes with, as a GitOps tool would.
const userManager = "argocd-controller"

// httpRouteGVK is the Gateway API HTTPRoute kind.
var httpRouteGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// gatewayOnce installs the Gateway API CRDs once per run of the suite:
// sluice is already running without them, and must pick them up.
var gatewayOnce struct {
	sync.Once
	err error
}

// installGatewayAPI installs the standard HTTPRoute CRD of the
// sigs.k8s.io/gateway-api module sluice is built with, and waits until it
// is served.
func installGatewayAPI(t *testing.T) {
	t.Helper()
	gatewayOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
		if err != nil {
			gatewayOnce.err = fmt.Errorf("locating the gateway-api module: %w", err)
			return
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
		raw, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_httproutes.yaml"))
		if err != nil {
			gatewayOnce.err = err
			return
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
			gatewayOnce.err = err
			return
		}
		if err := suite.c.Create(context.Background(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
			gatewayOnce.err = fmt.Errorf("creating the HTTPRoute CRD: %w", err)
		}
	})
	if gatewayOnce.err != nil {
		t.Fatal(gatewayOnce.err)
	}
	eventually(t, "HTTPRoutes served", func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(httpRouteGVK.GroupVersion().WithKind("HTTPRouteList"))
		err := suite.c.List(ctxFor(t), list, client.InNamespace("default"))
		return err == nil, fmt.Sprint(err)
	})
}

// holdsFor checks every 100ms for d that check finds nothing wrong
// (returns ""), failing the test with what it found otherwise.
func holdsFor(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if bad := check(); bad != "" {
			t.Fatal(bad)
		}
		<-tick.C
	}
}

// applyAs applies obj with server-side apply under manager.
func applyAs(t *testing.T, manager string, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if err := suite.c.Apply(ctxFor(t), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		t.Fatalf("applying %s %s as %s: %v", u.GetKind(), u.GetName(), manager, err)
	}
}

// webService applies the Service name selecting app=name, as the user's
// GitOps tool does.
func webService(t *testing.T, ns, name string, typ corev1.ServiceType) {
	t.Helper()
	port := map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)}
	applyAs(t, userManager, map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{"app": name}, "annotations": map[string]any{"team": "shop"}},
		"spec":     map[string]any{"type": string(typ), "selector": map[string]any{"app": name}, "ports": []any{port}},
	})
}

// nginxIngress applies the Ingress name of class nginx, sending
// shop.example/ to the Service svc.
func nginxIngress(t *testing.T, ns, name, svc string) {
	t.Helper()
	path := map[string]any{"path": "/", "pathType": "Prefix", "backend": map[string]any{"service": map[string]any{"name": svc, "port": map[string]any{"number": int64(80)}}}}
	applyAs(t, userManager, map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": ns, "name": name, "annotations": map[string]any{nginxPrefix + "proxy-body-size": "8m"}},
		"spec": map[string]any{
			"ingressClassName": "nginx",
			"rules":            []any{map[string]any{"host": "shop.example", "http": map[string]any{"paths": []any{path}}}},
		},
	})
}

// httpRoute applies the HTTPRoute name sending shop.example/ to the Service
// svc.
func httpRoute(t *testing.T, ns, name, svc string) {
	t.Helper()
	applyAs(t, userManager, map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "public"}},
			"hostnames":  []any{"shop.example"},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": svc, "port": int64(80)}},
			}},
		},
	})
}

// trafficRollout is a Rollout of the Deployment name routing through
// routings (grace period 1s), with steps.
func trafficRollout(ns, name string, canaryStyle bool, routings []rolloutsv1beta1.TrafficRoutingRef, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	ro := newRollout(ns, name, steps...)
	ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = canaryStyle
	for i := range routings {
		routings[i].GracePeriodSeconds = 1
	}
	ro.Spec.Strategy.Canary.TrafficRoutings = routings
	return ro
}

// viaIngress is a trafficRoutings entry through the nginx Ingress name.
func viaIngress(svc, name string) rolloutsv1beta1.TrafficRoutingRef {
	return rolloutsv1beta1.TrafficRoutingRef{Service: svc, Ingress: &rolloutsv1beta1.IngressTrafficRouting{ClassType: "nginx", Name: name}}
}

// viaHTTPRoute is a trafficRoutings entry through the HTTPRoute name.
func viaHTTPRoute(svc, name string) rolloutsv1beta1.TrafficRoutingRef {
	return rolloutsv1beta1.TrafficRoutingRef{Service: svc, Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: ptr(name)}}
}

// trafficStep is a step of replicas pods, traffic (empty: none) and
// matches, waiting for approval.
func trafficStep(replicas, traffic string, matches ...rolloutsv1beta1.HttpRouteMatch) rolloutsv1beta1.CanaryStep {
	s := step(replicas, nil)
	if traffic != "" {
		s.Traffic = ptr(traffic)
	}
	s.Matches = matches
	return s
}

// headerMatch matches requests whose header name is value.
func headerMatch(name, value string) rolloutsv1beta1.HttpRouteMatch {
	return rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: name, Value: value}}}
}

// userView is what the user wrote of an object: labels, annotations and
// spec (a Service's cluster IPs are left in: they must not change either).
func userView(t *testing.T, ns, name string, gvk schema.GroupVersionKind) string {
	t.Helper()
	u := getObject(t, ns, name, gvk)
	if u == nil {
		t.Fatalf("%s %s not found", gvk.Kind, name)
	}
	b, _ := json.Marshal(map[string]any{"labels": u.GetLabels(), "annotations": u.GetAnnotations(), "spec": u.Object["spec"]})
	return string(b)
}

var (
	serviceGVK = corev1.SchemeGroupVersion.WithKind("Service")
	ingressGVK = networkingv1.SchemeGroupVersion.WithKind("Ingress")
)

// getObject reads an object; nil when it does not exist.
func getObject(t *testing.T, ns, name string, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s %s: %v", gvk.Kind, name, err)
	}
	return u
}

// assertSluiceOwnsNothing checks that no field of the object is managed by
// sluice any more.
func assertSluiceOwnsNothing(t *testing.T, ns, name string, gvk schema.GroupVersionKind) {
	t.Helper()
	u := getObject(t, ns, name, gvk)
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == rolloutsv1beta1.FieldManager {
			b, _ := json.Marshal(mf.FieldsV1)
			t.Errorf("%s %s: sluice still manages %s", gvk.Kind, name, b)
		}
	}
}

// serviceSelector returns the selector of the Service name; nil when it
// does not exist.
func serviceSelector(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	svc := &corev1.Service{}
	err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, svc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading Service %s: %v", name, err)
	}
	return svc.Spec.Selector
}

// selectedPods counts the live, ready pods the Service name selects, by
// image.
func selectedPods(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	sel := serviceSelector(t, ns, name)
	if sel == nil {
		t.Fatalf("Service %s not found", name)
	}
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(sel)}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			out[p.Spec.Containers[0].Image]++
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// canaryAnnotations returns the nginx canary annotations of the canary
// Ingress of name (without the prefix); nil when there is none.
func canaryAnnotations(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	u := getObject(t, ns, name+"-canary", ingressGVK)
	if u == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range u.GetAnnotations() {
		if s, ok := strings.CutPrefix(k, nginxPrefix); ok {
			out[s] = v
		}
	}
	return out
}

// assertCanaryIngress checks the canary Ingress of name: nginx annotations
// want, and its one path leading to the canary Service svc.
func assertCanaryIngress(t *testing.T, ns, name, svc string, want map[string]string) {
	t.Helper()
	if got := canaryAnnotations(t, ns, name); !maps.Equal(got, want) {
		t.Fatalf("canary Ingress annotations %v, want %v", got, want)
	}
	ing := &networkingv1.Ingress{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name + "-canary"}, ing); err != nil {
		t.Fatal(err)
	}
	r := ing.Spec.Rules
	if len(r) != 1 || r[0].Host != "shop.example" || len(r[0].HTTP.Paths) != 1 || r[0].HTTP.Paths[0].Backend.Service.Name != svc+"-canary" ||
		ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" {
		t.Fatalf("canary Ingress spec %+v", ing.Spec)
	}
}

// routingSnapshot is what a trafficMonitor saw at one moment.
type routingSnapshot struct {
	// routed: the canary Ingress exists and sends requests (a weight
	// above 0 or a match).
	routed bool
	// canaryIngress: the canary Ingress exists.
	canaryIngress bool
	// stableSelector is the stable Service's selector.
	stableSelector map[string]string
	// canaryReady counts the ready pods the canary Service selects (-1:
	// no canary Service).
	canaryReady int
	// images counts all live pods of the app by image.
	images map[string]int
}

// trafficMonitor polls the routing of one app until stopped.
type trafficMonitor struct {
	mu    sync.Mutex
	seen  []routingSnapshot
	stopC chan struct{}
	done  chan struct{}
}

// watchRouting records, every 50ms, the routing of the app name (Service,
// Ingress and Deployment all called name).
func watchRouting(t *testing.T, ns, name string) *trafficMonitor {
	t.Helper()
	m := &trafficMonitor{stopC: make(chan struct{}), done: make(chan struct{})}
	ctx := context.Background()
	go func() {
		defer close(m.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if s, ok := snapshotRouting(ctx, ns, name); ok {
				m.mu.Lock()
				m.seen = append(m.seen, s)
				m.mu.Unlock()
			}
			select {
			case <-m.stopC:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *trafficMonitor) stop() {
	select {
	case <-m.stopC:
	default:
		close(m.stopC)
	}
	<-m.done
}

// snapshots stops the monitor and returns what it saw.
func (m *trafficMonitor) snapshots() []routingSnapshot {
	m.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen
}

// snapshotRouting reads the routing of the app name. The reads go in the
// order sluice changes things in, so that a snapshot taken across changes
// never shows an order that did not happen: the stable Service, the pods,
// the canary Service, then the canary Ingress.
func snapshotRouting(ctx context.Context, ns, name string) (routingSnapshot, bool) {
	s := routingSnapshot{canaryReady: -1, images: map[string]int{}}
	svc := &corev1.Service{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc); err != nil {
		return s, false
	}
	s.stableSelector = svc.Spec.Selector
	pods := &corev1.PodList{}
	if err := suite.c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		return s, false
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			s.images[p.Spec.Containers[0].Image]++
		}
	}
	canary := &corev1.Service{}
	switch err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-canary"}, canary); {
	case err == nil:
		s.canaryReady = 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && podReady(p) && labels.SelectorFromSet(canary.Spec.Selector).Matches(labels.Set(p.Labels)) {
				s.canaryReady++
			}
		}
	case !apierrors.IsNotFound(err):
		return s, false
	}
	ing := &networkingv1.Ingress{}
	switch err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-canary"}, ing); {
	case err == nil:
		s.canaryIngress = true
		a := ing.Annotations
		s.routed = (a[nginxPrefix+"canary-weight"] != "" && a[nginxPrefix+"canary-weight"] != "0") || a[nginxPrefix+"canary-by-header"] != "" || a[nginxPrefix+"canary-by-cookie"] != ""
	case !apierrors.IsNotFound(err):
		return s, false
	}
	return s, true
}

// assertNeverRoutedToUnreadyPods checks that whenever requests went to the
// canary, the canary Service selected ready pods.
func assertNeverRoutedToUnreadyPods(t *testing.T, seen []routingSnapshot) {
	t.Helper()
	for i, s := range seen {
		if s.routed && s.canaryReady <= 0 {
			t.Fatalf("snapshot %d/%d: requests routed to the canary while its Service selects %d ready pods", i, len(seen), s.canaryReady)
		}
	}
}

// podsWithHash counts the live pods of app whose pod-template-hash is hash,
// by image.
func podsWithHash(t *testing.T, ns, app, hash string) map[string]int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": app, "pod-template-hash": hash}); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.Spec.Containers[0].Image]++
		}
	}
	return out
}

// managersOf names the field managers that own the field at path of the
// object, each as "manager/operation".
func managersOf(u *unstructured.Unstructured, path ...string) []string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		cur, ok := fields, true
		for _, p := range path {
			var next any
			if next, ok = cur["f:"+p]; !ok {
				break
			}
			if cur, ok = next.(map[string]any); !ok {
				break
			}
		}
		if ok {
			out = append(out, mf.Manager+"/"+string(mf.Operation))
		}
	}
	return out
}
