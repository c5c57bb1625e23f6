package partition

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A new revision written between Status and UpgradeBatch (the webhook holds
// it again) is not released with the batch computed for the old one: the
// partition stays where the hold put it until the next reconcile reads a
// fresh status. With the template unchanged, the same call lowers it.
func TestUpgradeBatch_templateChangedSinceStatus_placesNothing(t *testing.T) {
	held := heldSTS("app:v2", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":null}}}}`)
	_ = unstructured.SetNestedField(held.Object, map[string]any{"matchLabels": map[string]any{"app": "db"}}, "spec", "selector")
	c := fake.NewClientBuilder().WithObjects(held).Build()
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	key := types.NamespacedName{Namespace: "shop", Name: "db"}

	for _, tc := range []struct {
		name          string
		newImage      string
		wantPartition int64
	}{
		{name: "template changed", newImage: "app:v3", wantPartition: int64(holdPartition)},
		{name: "template unchanged", newImage: "", wantPartition: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(c, c, testStatefulSet, gvk, key)
			if _, err := r.Status(t.Context()); err != nil {
				t.Fatal(err)
			}
			if tc.newImage != "" {
				u := get(t, c, gvk, key)
				containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				containers[0].(map[string]any)["image"] = tc.newImage
				_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
				if err := c.Update(t.Context(), u); err != nil {
					t.Fatal(err)
				}
			}
			placed, err := r.UpgradeBatch(t.Context(), 2)
			if err != nil {
				t.Fatal(err)
			}
			if placed {
				t.Errorf("placed = true right after asking for 2 pods")
			}
			got, _, _ := unstructured.NestedInt64(get(t, c, gvk, key).Object, "spec", "updateStrategy", "rollingUpdate", "partition")
			if got != tc.wantPartition {
				t.Errorf("partition %d, want %d", got, tc.wantPartition)
			}
		})
	}
}

func get(t *testing.T, c client.Client, gvk schema.GroupVersionKind, key types.NamespacedName) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(t.Context(), key, u); err != nil {
		t.Fatal(err)
	}
	return u
}
