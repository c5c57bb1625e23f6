package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/webhookrules"
	"github.com/sluice-dev/sluice/test/fakeoperators"
)

// partitionKind describes, for the scenarios, one kind sluice releases
// through a partition.
type partitionKind struct {
	gvk schema.GroupVersionKind
	// partition is the path of the update partition.
	partition []string
	// hold is the partition value that holds a new release.
	hold any
	// spec is the spec of a workload of replicas pods (ignored by
	// DaemonSets: one pod per node) running image.
	spec func(name string, replicas int32, image string) map[string]any
	// ordinals is true when pods are named <name>-<ordinal> and updated
	// from the highest ordinal down.
	ordinals bool
	// operator returns the test doubles to run for the kind, if any.
	operator func() []fakeoperators.Controller
	// crds are the CRD files (under testdata/partition) the kind needs.
	crds []string
	// resource is set for custom kinds, whose updates sluice's webhook
	// intercepts only once a Rollout names them.
	resource *schema.GroupResource
}

// rolloutCreated waits, for a custom kind, until the workload webhook
// intercepts its updates.
func (k partitionKind) rolloutCreated(t *testing.T) {
	t.Helper()
	if k.resource != nil {
		waitWorkloadRule(t, k.resource.Group, k.resource.Resource, true)
	}
}

// podTemplate is the pod template of app name running image.
func podTemplate(name, image string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": name}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
	}
}

func selectorOf(name string) map[string]any {
	return map[string]any{"matchLabels": map[string]any{"app": name}}
}

// prepare installs the kind's CRDs and runs its test doubles for ns.
func (k partitionKind) prepare(t *testing.T, ns string) {
	t.Helper()
	for _, f := range k.crds {
		installCRD(t, filepath.Join("testdata", "partition", f), nil)
	}
	if k.operator == nil {
		return
	}
	op, err := fakeoperators.Start(context.Background(), suite.cfg, ns, k.operator()...)
	if err != nil {
		t.Fatalf("starting the fake operator: %v", err)
	}
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Errorf("stopping the fake operator: %v", err)
		}
	})
}

// installCRD applies the CRD in file, changed by edit if not nil, and
// waits until it is served.
func installCRD(t *testing.T, file string, edit func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if edit != nil {
		edit(crd)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	delete(u.Object, "status")
	if err := suite.c.Patch(ctxFor(t), u, client.Apply, client.FieldOwner("sluice-e2e"), client.ForceOwnership); err != nil { //nolint:staticcheck // unstructured apply of a whole object
		t.Fatalf("applying CRD %s: %v", crd.Name, err)
	}
	eventually(t, "CRD "+crd.Name+" established", func() (bool, string) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				_, err := suite.c.RESTMapper().RESTMapping(schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
				return err == nil, fmt.Sprint(err)
			}
		}
		return false, fmt.Sprint(conds)
	})
	return crd
}

// createWorkload creates a workload of kind k and waits until its pods
// (want of them) all run image and are ready.
func createWorkload(t *testing.T, k partitionKind, ns, name string, replicas int32, image string, want int) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": k.spec(name, replicas, image)}}
	u.SetGroupVersionKind(k.gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	if k.resource != nil {
		// A custom kind's objects opt in themselves, as OpenKruise documents.
		u.SetLabels(map[string]string{rolloutsv1beta1.WorkloadTypeLabel: rolloutsv1beta1.WorkloadTypeStatefulSet})
	}
	if err := suite.c.Create(ctxFor(t), u); err != nil {
		t.Fatalf("creating %s: %v", k.gvk.Kind, err)
	}
	waitPods(t, ns, name, map[string]int{image: want})
}

// waitPods waits until the live pods of app name count want by image and
// are all ready.
func waitPods(t *testing.T, ns, name string, want map[string]int) {
	t.Helper()
	eventually(t, fmt.Sprintf("pods of %s %v and ready", name, want), func() (bool, string) {
		got, ready := podImagesReady(t, ns, name)
		total := 0
		for _, n := range want {
			total += n
		}
		return equality.Semantic.DeepEqual(got, want) && ready == total, fmt.Sprintf("pods by image %v, %d ready", got, ready)
	})
}

// podImagesReady counts the live pods of app name by image, and the ready
// ones.
func podImagesReady(t *testing.T, ns, name string) (map[string]int, int) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	out, ready := map[string]int{}, 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		out[p.Spec.Containers[0].Image]++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return out, ready
}

// podOrdinals lists, by image, the ordinals of the live pods of app name.
func podOrdinals(t *testing.T, ns, name string) map[string][]int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	out := map[string][]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(p.Name, name+"-"))
		if err != nil {
			t.Fatalf("pod %s has no ordinal", p.Name)
		}
		out[p.Spec.Containers[0].Image] = append(out[p.Spec.Containers[0].Image], n)
	}
	for _, ords := range out {
		sort.Ints(ords)
	}
	return out
}

// assertPods checks the pods of app name after a step: by ordinal for
// ordinal kinds, else by count.
func assertPods(t *testing.T, k partitionKind, ns, name, step string, want map[string][]int) {
	t.Helper()
	if k.ordinals {
		if got := podOrdinals(t, ns, name); !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("%s: pod ordinals by image %v, want %v", step, got, want)
		}
		return
	}
	counts := map[string]int{}
	for image, ords := range want {
		counts[image] = len(ords)
	}
	if got, _ := podImagesReady(t, ns, name); !equality.Semantic.DeepEqual(got, counts) {
		t.Fatalf("%s: pods by image %v, want %v", step, got, counts)
	}
}

func getWorkload(t *testing.T, k partitionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("reading %s: %v", k.gvk.Kind, err)
	}
	return u
}

// setWorkloadImage changes the image of the workload's pod template as a
// user would (a merge patch, field manager kubectl), and returns the
// workload as stored: with what the admission webhook did to the update.
func setWorkloadImage(t *testing.T, k partitionKind, ns, name, image string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("setting image: %v", err)
	}
	return u
}

// rolloutFor builds a Rollout of workload name of kind k.
func rolloutFor(k partitionKind, ns, name string, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	ro := newRollout(ns, name, steps...)
	ro.Spec.WorkloadRef = rolloutsv1beta1.ObjectRef{APIVersion: k.gvk.GroupVersion().String(), Kind: k.gvk.Kind, Name: name}
	return ro
}

// partitionOf reads the partition of u; ok is false when it has none.
func partitionOf(k partitionKind, u *unstructured.Unstructured) (any, bool) {
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, k.partition...)
	return v, found
}

// assertHeldAt checks a workload a release holds: its partition is want,
// it is marked for the Rollout and carries its restore patch.
func assertHeldAt(t *testing.T, k partitionKind, u *unstructured.Unstructured, want any) {
	t.Helper()
	if got, _ := partitionOf(k, u); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s %s: partition %v, want %v", k.gvk.Kind, u.GetName(), got, want)
	}
	a := u.GetAnnotations()
	if a[rolloutsv1beta1.InProgressingAnnotation] != fmt.Sprintf(`{"rolloutName":%q}`, u.GetName()) {
		t.Fatalf("in-progressing annotation %q", a[rolloutsv1beta1.InProgressingAnnotation])
	}
	if _, ok := a[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok {
		t.Fatalf("no %s annotation while held", rolloutsv1beta1.DeploymentOriginalAnnotation)
	}
}

// assertHandedBack checks that the workload's spec is exactly original
// again and that it carries nothing of sluice's but, if labelled, the
// workload-type label.
func assertHandedBack(t *testing.T, k partitionKind, ns, name string, original map[string]any, labelled bool) {
	t.Helper()
	u := getWorkload(t, k, ns, name)
	strategy, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "updateStrategy")
	wantStrategy := original["updateStrategy"]
	if !equality.Semantic.DeepEqual(normalizeJSON(strategy), normalizeJSON(wantStrategy)) {
		t.Errorf("spec.updateStrategy %s, want the original %s", mustJSON(strategy), mustJSON(wantStrategy))
	}
	for key := range u.GetAnnotations() {
		if strings.HasPrefix(key, "sluice.dev/") || strings.HasPrefix(key, "rollouts.kruise.io/") || strings.HasPrefix(key, "batchrelease.") {
			t.Errorf("annotation %s left on the workload", key)
		}
	}
	labels := u.GetLabels()
	if _, ok := labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		t.Errorf("label %s left on the workload", rolloutsv1beta1.StableRevisionLabel)
	}
	if _, ok := labels[rolloutsv1beta1.WorkloadTypeLabel]; ok != labelled {
		t.Errorf("workload-type label present %v, want %v", ok, labelled)
	}
}

func normalizeJSON(v any) any {
	var out any
	_ = json.Unmarshal([]byte(mustJSON(v)), &out)
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitWorkloadRule waits until sluice's webhook for custom kinds (in its
// own configuration, beside the registered one) intercepts updates of
// resource (present) or no longer does.
func waitWorkloadRule(t *testing.T, group, resource string, present bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("workload webhook rule for %s.%s present=%v", resource, group, present), func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: webhookrules.OwnConfigName("sluice-e2e")}, cfg)
		if apierrors.IsNotFound(err) {
			return !present, "no configuration for custom kinds"
		}
		if err != nil {
			return false, err.Error()
		}
		found := false
		for _, wh := range cfg.Webhooks {
			for _, r := range wh.Rules {
				if len(r.APIGroups) == 1 && r.APIGroups[0] == group && len(r.Resources) == 1 && r.Resources[0] == resource {
					found = true
				}
			}
		}
		return found == present, mustJSON(cfg.Webhooks)
	})
}

// waitCompleted waits until the release finished successfully.
func waitCompleted(t *testing.T, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			c != nil && c.Status == corev1.ConditionTrue
	})
}

// waitGone waits until the Rollout is deleted.
func waitGone(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), "get: " + errString(err)
	})
}
