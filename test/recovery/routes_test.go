package recovery

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/plugin"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/fakeoperators"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/managerproc"
	"github.com/sluice-dev/sluice/traffic/gateway"
	"github.com/sluice-dev/sluice/traffic/handback"
	"github.com/sluice-dev/sluice/traffic/lua"
	"github.com/sluice-dev/sluice/traffic/service"
)

// routedRecoveryScript is the recovery of docs/recovery.md for a workload
// behind a stable Service and a route sluice changes in place (an
// HTTPRoute, a Lua-routed object), in plain kubectl: the stable Service's
// own selector back, the route by its recovery patch, the canary Service,
// then the workload by its restore patch. NS, SERVICE, LABEL (the revision
// label sluice narrowed the Service with), ROUTE and WORKLOAD
// (kubectl's TYPE/NAME) are set by the caller.
const routedRecoveryScript = `set -eu
kubectl -n "$NS" patch service "$SERVICE" --type merge \
  -p '{"spec":{"selector":{"'"$LABEL"'":null}},"metadata":{"annotations":{"sluice.dev/original-selector":null}}}'
P=$(kubectl -n "$NS" get "$ROUTE" -o jsonpath='{.metadata.annotations.sluice\.dev/restore-json-patch}')
[ -z "$P" ] || kubectl -n "$NS" patch "$ROUTE" --type json -p "$P"
kubectl -n "$NS" delete service "$SERVICE-canary" --ignore-not-found
kubectl -n "$NS" patch "$WORKLOAD" --type merge \
  -p "$(kubectl -n "$NS" get "$WORKLOAD" -o jsonpath='{.metadata.annotations.sluice\.dev/restore-patch}')"
`

// e2eTestdata is where test/e2e keeps the CRDs of the route and workload
// kinds that Kubernetes does not serve by itself.
const e2eTestdata = "../e2e/testdata"

// routeKind is a kind of route sluice changes in place.
type routeKind struct {
	gvk schema.GroupVersionKind
	// resource is kubectl's name of the kind.
	resource string
	// record is the annotation sluice records the route's original in.
	record string
	// install installs its CRD.
	install func(ctx context.Context) error
	// object is the route "web" sending every request to the Service web.
	object func(ns string) *unstructured.Unstructured
	// ref is the trafficRoutings entry of the Service web through it.
	ref rolloutsv1beta1.TrafficRoutingRef
}

var httpRoutes = routeKind{
	gvk: gateway.HTTPRouteKind, resource: "httproutes.gateway.networking.k8s.io", record: gateway.RecordAnnotation,
	install: func(ctx context.Context) error {
		file, err := env.HTTPRouteCRD()
		if err != nil {
			return err
		}
		return env.InstallCRDFile(ctx, suite.c, file)
	},
	object: func(ns string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
			"metadata": map[string]any{"namespace": ns, "name": "web"},
			"spec": map[string]any{
				"parentRefs": []any{map[string]any{"name": "public"}},
				"hostnames":  []any{"shop.example"},
				"rules": []any{map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
					"backendRefs": []any{map[string]any{"name": "web", "port": int64(80)}},
				}},
			},
		}}
	},
	ref: rolloutsv1beta1.TrafficRoutingRef{Service: "web", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: ptr("web")}},
}

var virtualServices = routeKind{
	gvk: schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}, resource: "virtualservices.networking.istio.io",
	record: lua.OriginalAnnotation,
	install: func(ctx context.Context) error {
		return env.InstallCRDFile(ctx, suite.c, filepath.Join(e2eTestdata, "lua", "networking.istio.io_virtualservices.yaml"))
	},
	object: func(ns string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
			"metadata": map[string]any{"namespace": ns, "name": "web"},
			"spec": map[string]any{
				"hosts": []any{"web"},
				"http":  []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "web", "port": map[string]any{"number": int64(80)}}}}}},
			},
		}}
	},
	ref: rolloutsv1beta1.TrafficRoutingRef{Service: "web", CustomNetworkRefs: []rolloutsv1beta1.ObjectRef{{APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Name: "web"}}},
}

// recoveredKind is a workload kind, as the recovery sees it.
type recoveredKind struct {
	gvk schema.GroupVersionKind
	// resource is kubectl's name of the kind.
	resource string
	// label is the revision label sluice narrows the stable Service with.
	label string
	// crd is the file of its CRD under e2eTestdata, if any.
	crd string
	// operator is the test double that runs its workloads, if any.
	operator func() fakeoperators.Controller
	// spec is the spec of a workload "web" of 4 pods on image.
	spec func(image string) map[string]any
	// killAt is where sluice is killed in the middle of a batch.
	killAt killpoint.Point
}

func webTemplate(image string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
	}
}

var webSelector = map[string]any{"matchLabels": map[string]any{"app": "web"}}

var (
	movingDeployments = recoveredKind{
		gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, resource: "deployment", label: "pod-template-hash",
		spec: func(image string) map[string]any {
			return map[string]any{"replicas": int64(4), "selector": webSelector, "template": webTemplate(image)}
		},
		killAt: killpoint.DeploymentMoved,
	}
	armedDeployments = func() recoveredKind {
		k := movingDeployments
		k.killAt = killpoint.DeploymentArmed
		return k
	}()
	statefulSets = recoveredKind{
		gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, resource: "statefulset", label: "controller-revision-hash",
		spec: func(image string) map[string]any {
			return map[string]any{"replicas": int64(4), "selector": webSelector, "template": webTemplate(image), "serviceName": "web", "podManagementPolicy": "Parallel"}
		},
		killAt: killpoint.PartitionLowered,
	}
	cloneSets = recoveredKind{
		gvk: fakeoperators.CloneSetGVK, resource: "clonesets.apps.kruise.io", label: "pod-template-hash",
		crd:      "partition/apps.kruise.io_clonesets.yaml",
		operator: fakeoperators.CloneSet,
		spec: func(image string) map[string]any {
			return map[string]any{"replicas": int64(4), "selector": webSelector, "template": webTemplate(image), "updateStrategy": map[string]any{"type": "ReCreate", "maxUnavailable": "25%"}}
		},
		killAt: killpoint.PartitionLowered,
	}
	advancedStatefulSets = recoveredKind{
		gvk: schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "StatefulSet"}, resource: "statefulsets.apps.kruise.io", label: "controller-revision-hash",
		crd: "partition/apps.kruise.io_statefulsets.yaml",
		operator: func() fakeoperators.Controller {
			return fakeoperators.StatefulSetLike(schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "StatefulSet"}, true)
		},
		spec: func(image string) map[string]any {
			return map[string]any{"replicas": int64(4), "selector": webSelector, "template": webTemplate(image),
				"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": int64(1), "podUpdatePolicy": "ReCreate"}}}
		},
		killAt: killpoint.PartitionLowered,
	}
)

// Given a workload of 4 pods behind the stable Service web and a route
// sluice changes in place (an HTTPRoute, or an Istio VirtualService
// through sluice's Lua script), released in steps 1 pod at 20% / 50% at
// 50% / 100%, the first step routed
// When sluice is killed (SIGKILL) at a named kill point in the middle of
// the second step's batch (a Deployment armed or moving, a partition
// lowered) and the recovery of docs/recovery.md is run, sluice gone: in
// plain kubectl, or with kubectl sluice recover
// Then the workload's own controller finishes the rollout, every Service
// selects ready pods throughout, and the route is exactly as before the
// release, with nothing of sluice left on it.
func TestRecovery_killedAtAKillPoint_recoveryRestoresRoutesAndFinishes(t *testing.T) {
	tests := []struct {
		name  string
		kind  recoveredKind
		route routeKind
		// plugin recovers with kubectl sluice recover instead.
		plugin bool
	}{
		{"Deployment moving, HTTPRoute", movingDeployments, httpRoutes, false},
		{"Deployment armed, VirtualService", armedDeployments, virtualServices, false},
		{"StatefulSet partition lowered, HTTPRoute", statefulSets, httpRoutes, false},
		{"CloneSet partition lowered, VirtualService", cloneSets, virtualServices, false},
		{"Advanced StatefulSet partition lowered, HTTPRoute", advancedStatefulSets, httpRoutes, false},
		{"kubectl sluice recover, StatefulSet partition lowered, VirtualService", statefulSets, virtualServices, true},
		{"kubectl sluice recover, CloneSet partition lowered, HTTPRoute", cloneSets, httpRoutes, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRoutedRelease(t, tt.kind, tt.route)
			r.killMidBatch()
			if tt.plugin {
				r.recoverWithPlugin()
			} else {
				r.run(routedRecoveryScript)
			}
			r.waitFinished()
			r.serving.AssertAlwaysServed(t)
			r.assertRestored()
		})
	}
}

// routedRelease is one workload "web" released through the Service web
// and the route "web".
type routedRelease struct {
	t       *testing.T
	ns      string
	kind    recoveredKind
	route   routeKind
	name    string
	p       *managerproc.Process
	before  any // the route's spec before the release
	serving *kube.Serving
}

func newRoutedRelease(t *testing.T, kind recoveredKind, route routeKind) *routedRelease {
	t.Helper()
	ctx := ctxFor(t)
	if err := route.install(ctx); err != nil {
		t.Fatal(err)
	}
	if kind.crd != "" {
		if err := env.InstallCRDFile(ctx, suite.c, filepath.Join(e2eTestdata, kind.crd)); err != nil {
			t.Fatal(err)
		}
	}
	r := &routedRelease{t: t, ns: newNamespace(t, "recover-route"), kind: kind, route: route, name: "sluice-recovery-route"}
	if kind.operator != nil {
		op, err := fakeoperators.Start(context.Background(), suite.cfg, r.ns, kind.operator())
		if err != nil {
			t.Fatalf("starting the fake operator: %v", err)
		}
		t.Cleanup(func() {
			if err := op.Stop(); err != nil {
				t.Errorf("stopping the fake operator: %v", err)
			}
		})
	}
	t.Cleanup(func() { deleteWebhooks(t, r.name) })
	r.p = startSluice(t, r.name)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if err := suite.c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	obj := route.object(r.ns)
	if err := suite.c.Create(ctx, obj); err != nil {
		t.Fatalf("creating the %s: %v", route.gvk.Kind, err)
	}
	r.before = r.routeObject().Object["spec"]
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kind.gvk.GroupVersion().String(), "kind": kind.gvk.Kind,
		"metadata": map[string]any{"namespace": r.ns, "name": "web"},
		"spec":     kind.spec("web:v1"),
	}}
	if err := suite.c.Create(ctx, w); err != nil {
		t.Fatalf("creating the %s: %v", kind.gvk.Kind, err)
	}
	r.waitPods("web:v1")

	one, half, all := intstr.FromInt32(1), intstr.FromString("50%"), intstr.FromString("100%")
	twenty, fifty := "20%", "50%"
	ref := route.ref
	ref.GracePeriodSeconds = 1
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: kind.gvk.GroupVersion().String(), Kind: kind.gvk.Kind, Name: "web"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
				Steps: []rolloutsv1beta1.CanaryStep{
					{Replicas: &one, TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: &twenty}},
					{Replicas: &half, TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: &fifty}},
					{Replicas: &all},
				},
				TrafficRoutings: []rolloutsv1beta1.TrafficRoutingRef{ref},
			}},
		},
	}
	if err := suite.c.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, r.ns, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	return r
}

// killMidBatch releases web:v2 up to the first step (routed), then
// restarts sluice blocking at the kind's kill point, approves the step and
// kills sluice (SIGKILL) where it blocks, in the middle of the second
// step's batch: the workload held and changed for the batch, the stable
// Service narrowed, the route carrying the first step's traffic.
func (r *routedRelease) killMidBatch() {
	t := r.t
	ctx := ctxFor(t)
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(r.kind.gvk)
	w.SetNamespace(r.ns)
	w.SetName("web")
	// A merge patch, which every kind takes (custom kinds have no
	// strategic merge).
	image := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"web:v2"}]}}}}`)
	if err := suite.c.Patch(ctx, w, client.RawPatch(types.MergePatchType, image)); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, r.ns, "step 1 paused", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	r.p.Kill(t)
	r.p = managerproc.Start(t, managerproc.Options{
		Name: r.name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c,
		KillPoints: []killpoint.Point{r.kind.killAt}, KillNamespace: r.ns,
	})
	r.serving = kube.WatchServing(t, suite.c, r.ns)
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"}}
	approve := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctx, ro, client.RawPatch(types.MergePatchType, approve), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatal(err)
	}
	reached := r.p.ReachedKillPoints(t)
	r.p.Kill(t)
	svc := &corev1.Service{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	t.Logf("sluice killed at %v, the Service selecting %v", reached, svc.Spec.Selector)
	if _, ok := svc.Spec.Selector[r.kind.label]; !ok {
		t.Fatalf("the stable Service selects %v, not narrowed by %s as docs/recovery.md says", svc.Spec.Selector, r.kind.label)
	}
	route := r.routeObject()
	if _, ok := route.GetAnnotations()[handback.RecoveryAnnotation]; !ok || apiequality.Semantic.DeepEqual(route.Object["spec"], r.before) {
		t.Fatalf("the %s is not routed, or has no %s: %v", r.route.gvk.Kind, handback.RecoveryAnnotation, route.Object)
	}
}

// run runs script with plain kubectl, as a person would with sluice gone.
func (r *routedRelease) run(script string) {
	t := r.t
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.kubeconfig, "NS="+r.ns, "SERVICE=web", "LABEL="+r.kind.label,
		"ROUTE="+r.route.resource+"/web", "WORKLOAD="+r.kind.resource+"/web")
	out, err := cmd.CombinedOutput()
	t.Logf("recovery:\n%s", out)
	if err != nil {
		t.Fatalf("the documented recovery failed: %v\n%s", err, out)
	}
}

// recoverWithPlugin runs kubectl sluice recover, sluice's controller gone.
func (r *routedRelease) recoverWithPlugin() {
	t := r.t
	t.Helper()
	var out bytes.Buffer
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"recover", "web", "-n", r.ns, "--kubeconfig", suite.kubeconfig})
	err := cmd.ExecuteContext(ctxFor(t))
	t.Logf("kubectl sluice recover:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
}

func (r *routedRelease) routeObject() *unstructured.Unstructured {
	r.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.route.gvk)
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, u); err != nil {
		r.t.Fatal(err)
	}
	return u
}

// waitPods waits until the workload runs 4 ready pods, all on image.
func (r *routedRelease) waitPods(image string) {
	r.t.Helper()
	eventually(r.t, "4 ready pods of "+image, func() (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctxFor(r.t), pods, client.InNamespace(r.ns), client.MatchingLabels{"app": "web"}); err != nil {
			return false, err.Error()
		}
		ready, other := 0, 0
		for i := range pods.Items {
			p := &pods.Items[i]
			switch {
			case p.DeletionTimestamp != nil:
			case p.Spec.Containers[0].Image == image && kube.PodReady(p):
				ready++
			default:
				other++
			}
		}
		return ready == 4 && other == 0, fmt.Sprintf("%d ready on %s, %d others", ready, image, other)
	})
}

// waitFinished waits until the workload's own controller has finished the
// rollout to web:v2, its restore patch applied.
func (r *routedRelease) waitFinished() {
	r.t.Helper()
	r.waitPods("web:v2")
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(r.kind.gvk)
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, w); err != nil {
		r.t.Fatal(err)
	}
	for _, k := range []string{rolloutsv1beta1.DeploymentOriginalAnnotation, rolloutsv1beta1.InProgressingAnnotation} {
		if _, ok := w.GetAnnotations()[k]; ok {
			r.t.Errorf("the %s keeps the annotation %s after the recovery", r.kind.gvk.Kind, k)
		}
	}
}

// assertRestored checks the Services and the route are as before the
// release.
func (r *routedRelease) assertRestored() {
	t := r.t
	t.Helper()
	svc := &corev1.Service{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: r.ns, Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector["app"] != "web" {
		t.Errorf("the Service selects %v after the recovery, want its own selector app=web", svc.Spec.Selector)
	}
	if _, ok := svc.Annotations[service.RecordAnnotation]; ok {
		t.Errorf("the Service keeps the annotation %s", service.RecordAnnotation)
	}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: r.ns, Name: "web-canary"}, &corev1.Service{}); err == nil {
		t.Error("the canary Service web-canary is still there after the recovery")
	}
	route := r.routeObject()
	if !apiequality.Semantic.DeepEqual(route.Object["spec"], r.before) {
		t.Errorf("the %s after the recovery: %v\nbefore the release: %v", r.route.gvk.Kind, route.Object["spec"], r.before)
	}
	for _, k := range []string{r.route.record, handback.RecoveryAnnotation} {
		if _, ok := route.GetAnnotations()[k]; ok {
			t.Errorf("the %s keeps the annotation %s", r.route.gvk.Kind, k)
		}
	}
}
