package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/poll"
)

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// documents reads the YAML documents of file as unstructured objects.
func documents(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// applyCRDs creates the CRDs in data (YAML) and waits until they are
// established.
func applyCRDs(ctx context.Context, data []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return err
	}
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	crd.ManagedFields = nil
	if err := suite.c.Patch(ctx, crd, client.Apply, client.FieldOwner("examples-test"), client.ForceOwnership); err != nil { //nolint:staticcheck // applying a manifest as kubectl does
		return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
	}
	for {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := suite.c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", crd.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// apply applies the example's files as `kubectl apply -f <dir>` would after
// namespace.yaml and crd.yaml: CRDs first, then the rest, each strictly
// validated by the API server.
func apply(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(files, func(i, j int) bool { return rank(files[i]) < rank(files[j]) })
	for _, f := range files {
		if filepath.Base(f) == "crd.yaml" {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := applyCRDs(ctxFor(t), data); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, u := range documents(t, f) {
			// Applied as kubectl would; strict validation names any field the
			// API server does not know.
			err := suite.c.Patch(ctxFor(t), u, client.Apply, client.FieldOwner("kubectl"), client.ForceOwnership, //nolint:staticcheck // applying a manifest as kubectl does
				&client.PatchOptions{Raw: &metav1.PatchOptions{FieldValidation: "Strict"}})
			if err != nil {
				t.Fatalf("applying %s %s from %s: %v", u.GetKind(), u.GetName(), f, err)
			}
		}
	}
}

// rank orders files: the namespace, then CRDs, then the rest by name.
func rank(file string) int {
	switch filepath.Base(file) {
	case "namespace.yaml":
		return 0
	case "crd.yaml":
		return 1
	}
	return 2
}

func getRollout(t *testing.T, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

// waitRollout waits until cond holds for the Rollout.
func waitRollout(t *testing.T, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	var ro *rolloutsv1beta1.Rollout
	eventually(t, "rollout "+ns+"/"+name+" "+what, func() (bool, string) {
		ro = getRollout(t, ns, name)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

func condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

// waitCompleted waits until the release of the current revision is done.
func waitCompleted(t *testing.T, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			c != nil && c.Status == corev1.ConditionTrue
	})
}

// waitPaused waits until the release is paused at step index.
func waitPaused(t *testing.T, ns, name string, index int32) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, fmt.Sprintf("paused at step %d", index), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// approve approves the paused step as `kubectl sluice approve` does: the
// sluice.dev/approve annotation pinned to the step and the revision.
func approve(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	value := fmt.Sprintf("step=%d,revision=%s", ro.Status.CurrentStepIndex, ro.Status.CanaryStatus.CanaryRevision)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, rolloutsv1beta1.ApproveAnnotation, value)
	if err := suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("approving step %d of %s: %v", ro.Status.CurrentStepIndex, ro.Name, err)
	}
}

// setImage sets the image of the first container of the workload's pod
// template, as `kubectl set image` does.
func setImage(t *testing.T, gvk schema.GroupVersionKind, ns, name, image string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, image)
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatalf("setting the image of %s %s: %v", gvk.Kind, name, err)
	}
}

// podsByImage counts the running pods of app by image.
func podsByImage(t *testing.T, ns, app string) map[string]int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && len(p.Spec.Containers) > 0 {
			out[p.Spec.Containers[0].Image]++
		}
	}
	return out
}

// waitPods waits until the pods of app run exactly the images in want.
func waitPods(t *testing.T, ns, app, what string, want map[string]int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s: pods of %s %v", what, app, want), func() (bool, string) {
		got := podsByImage(t, ns, app)
		if len(got) != len(want) {
			return false, fmt.Sprint(got)
		}
		for k, v := range want {
			if got[k] != v {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// getObject reads any object, or nil when it does not exist.
func getObject(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// deleteNamespace removes the example's namespace once the test passed.
func deleteNamespace(t *testing.T, ns string) {
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		_ = suite.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
}
