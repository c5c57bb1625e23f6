package restart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The kinds a release test runs on.
const (
	kindDeployment  = "Deployment"
	kindStatefulSet = "StatefulSet"
)

var httpRouteGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// newStatefulSetRelease is newRelease for a StatefulSet "web" (parallel pod
// management, partition 0), released through its partition.
func newStatefulSetRelease(t *testing.T, replicas int32, steps ...string) *release {
	t.Helper()
	r := &release{t: t, ns: newNamespace(t), kind: kindStatefulSet}
	labels := map[string]string{"app": "web"}
	zero := int32(0)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         "web",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:v0"}}},
			},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &zero},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), s); err != nil {
		t.Fatal(err)
	}
	r.waitComplete("web:v0")
	r.createRollout(steps, nil)
	return r
}

// newTrafficRelease is newRelease with a Service "web" and an HTTPRoute
// "web" in front of the Deployment, each step giving the new pods the
// traffic weight of the same number in traffic.
func newTrafficRelease(t *testing.T, replicas int32, steps, traffic []string) *release {
	t.Helper()
	installHTTPRouteCRD(t)
	r := &release{t: t, ns: newNamespace(t), kind: kindDeployment, traffic: true}
	r.createDeployment(replicas)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if err := suite.c.Create(ctxFor(t), svc); err != nil {
		t.Fatal(err)
	}
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"namespace": r.ns, "name": "web"},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "public"}},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": "web", "port": int64(80)}},
			}},
		},
	}}
	if err := suite.c.Create(ctxFor(t), route); err != nil {
		t.Fatal(err)
	}
	r.createRollout(steps, traffic)
	return r
}

// createDeployment creates the Deployment "web" of replicas pods on web:v0
// and waits until it is complete.
func (r *release) createDeployment(replicas int32) {
	r.t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:v0"}}},
			},
		},
	}
	if err := suite.c.Create(ctxFor(r.t), d); err != nil {
		r.t.Fatal(err)
	}
	r.waitComplete("web:v0")
}

// createRollout creates the Rollout "web" of the workload with steps (and
// their traffic weights, routed through the Service and HTTPRoute "web",
// when traffic is given) and waits until it is Healthy.
func (r *release) createRollout(steps, traffic []string) {
	r.t.Helper()
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: r.kind, Name: "web"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}},
		},
	}
	for i, s := range steps {
		v := intstr.Parse(s)
		step := rolloutsv1beta1.CanaryStep{Replicas: &v}
		if i < len(traffic) {
			step.Traffic = &traffic[i]
		}
		ro.Spec.Strategy.Canary.Steps = append(ro.Spec.Strategy.Canary.Steps, step)
	}
	if len(traffic) > 0 {
		route := "web"
		ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{
			Service: "web", GracePeriodSeconds: 1, Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &route},
		}}
	}
	if err := suite.c.Create(ctxFor(r.t), ro); err != nil {
		r.t.Fatal(err)
	}
	r.wait("Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
}

// workloadObject is an empty object of the release's kind named web.
func (r *release) workloadObject() client.Object {
	meta := metav1.ObjectMeta{Namespace: r.ns, Name: "web"}
	if r.kind == kindStatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: meta}
	}
	return &appsv1.Deployment{ObjectMeta: meta}
}

// statefulSetComplete reports whether the StatefulSet runs image on every
// pod and is back in its controller's hands (partition 0, no restore
// patch).
func (r *release) statefulSetComplete(image string) (bool, string) {
	s := &appsv1.StatefulSet{}
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, s); err != nil {
		return false, err.Error()
	}
	n := *s.Spec.Replicas
	pods := r.pods()
	_, held := s.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	partition := int32(0)
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = *ru.Partition
	}
	ok := !held && partition == 0 && s.Status.ObservedGeneration >= s.Generation && s.Status.UpdatedReplicas == n &&
		s.Status.CurrentRevision == s.Status.UpdateRevision && pods[image] == int(n) && len(pods) == 1
	return ok, fmt.Sprintf("status %+v pods %v partition %d held %v", s.Status, pods, partition, held)
}

// routeWeights renders the backendRefs of the HTTPRoute's rules, e.g.
// "web:90,web-canary:10".
func (r *release) routeWeights() string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(httpRouteGVK)
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, u); err != nil {
		r.t.Fatal(err)
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var out []string
	for _, rule := range rules {
		refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
		for _, b := range refs {
			ref := b.(map[string]any)
			if w, ok := ref["weight"]; ok {
				out = append(out, fmt.Sprintf("%s:%v", ref["name"], w))
			} else {
				out = append(out, fmt.Sprint(ref["name"]))
			}
		}
	}
	return strings.Join(out, ",")
}

// serviceSelector is the selector of the Service web.
func (r *release) serviceSelector() map[string]string {
	svc := &corev1.Service{}
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, svc); err != nil {
		r.t.Fatal(err)
	}
	return svc.Spec.Selector
}

var httpRouteCRD struct {
	once sync.Once
	err  error
}

// installHTTPRouteCRD installs Gateway API's HTTPRoute CRD from the
// gateway-api module sluice builds with.
func installHTTPRouteCRD(t *testing.T) {
	t.Helper()
	httpRouteCRD.once.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
		if err != nil {
			httpRouteCRD.err = fmt.Errorf("locating the gateway-api module (go list -m sigs.k8s.io/gateway-api): %w", err)
			return
		}
		raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"))
		if err != nil {
			httpRouteCRD.err = err
			return
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
			httpRouteCRD.err = err
			return
		}
		if err := suite.c.Create(context.Background(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
			httpRouteCRD.err = fmt.Errorf("creating the HTTPRoute CRD: %w", err)
			return
		}
	})
	if httpRouteCRD.err != nil {
		t.Fatal(httpRouteCRD.err)
	}
	eventually(t, "the HTTPRoute CRD served", func() (bool, string) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(httpRouteGVK.GroupVersion().WithKind("HTTPRouteList"))
		err := suite.c.List(ctxFor(t), l)
		return err == nil, fmt.Sprint(err)
	})
}
