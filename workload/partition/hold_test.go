package partition

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// sts is a StatefulSet-like object as the API server sends it.
func sts(image string, partition any) *unstructured.Unstructured {
	strategy := map[string]any{"type": "RollingUpdate"}
	if partition != nil {
		strategy["rollingUpdate"] = map[string]any{"partition": partition}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "db", "namespace": "shop"},
		"spec": map[string]any{
			"replicas":       int64(4),
			"updateStrategy": strategy,
			"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": image}},
			}},
		},
	}}
}

func cloneSet(image string, partition any) *unstructured.Unstructured {
	u := sts(image, nil)
	u.SetAPIVersion("apps.kruise.io/v1alpha1")
	u.SetKind("CloneSet")
	strategy := map[string]any{}
	if partition != nil {
		strategy["partition"] = partition
	}
	_ = unstructured.SetNestedField(u.Object, strategy, "spec", "updateStrategy")
	return u
}

func heldSTS(image, restore string) *unstructured.Unstructured {
	u := sts(image, int64(holdPartition))
	u.SetAnnotations(map[string]string{
		rolloutsv1beta1.InProgressingAnnotation: `{"rolloutName":"db"}`,
		restoreAnnotation:                       restore,
	})
	u.SetLabels(map[string]string{rolloutsv1beta1.StableRevisionLabel: "db-1"})
	return u
}

// atStep sets the partition a batch left on u.
func atStep(u *unstructured.Unstructured, partition int64) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(u.Object, partition, "spec", "updateStrategy", "rollingUpdate", "partition")
	return u
}

// withMaxUnavailable gives u a rollingUpdate.maxUnavailable.
func withMaxUnavailable(u *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	return u
}

const restoreNone = `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":null}}}`

const restoreZero = `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`

func TestHold(t *testing.T) {
	stsProfile := testStatefulSet.p
	csProfile := testCloneSet.p
	tests := []struct {
		name          string
		p             profile
		old, update   *unstructured.Unstructured
		mutate        func(*unstructured.Unstructured)
		wantChanged   bool
		wantPartition any
		wantRestore   string
	}{
		{
			name: "template change holds every pod and records the partition", p: stsProfile,
			old: sts("v1", int64(0)), update: sts("v2", int64(0)),
			wantChanged: true, wantPartition: int64(holdPartition), wantRestore: restoreZero,
		},
		{
			name: "no change passes", p: stsProfile,
			old: sts("v1", int64(0)), update: sts("v1", int64(0)), wantPartition: int64(0),
		},
		{
			name: "OnDelete passes", p: stsProfile,
			old: sts("v1", nil), update: sts("v2", nil),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "OnDelete", "spec", "updateStrategy", "type")
			},
		},
		{
			name: "scaled to zero passes", p: stsProfile,
			old: sts("v1", int64(0)), update: sts("v2", int64(0)),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas")
			},
			wantPartition: int64(0),
		},
		{
			name: "a partition that was never set is removed again at the end", p: stsProfile,
			old: sts("v1", nil), update: sts("v2", nil),
			wantChanged: true, wantPartition: int64(holdPartition),
			wantRestore: `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":null}}}`,
		},
		{
			name: "rollout-id change is held", p: stsProfile,
			old: sts("v1", int64(0)), update: sts("v1", int64(0)),
			mutate: func(u *unstructured.Unstructured) {
				u.SetAnnotations(map[string]string{rolloutsv1beta1.RolloutIDLabel: "r2"})
			},
			wantChanged: true, wantPartition: int64(holdPartition), wantRestore: restoreZero,
		},
		{
			name: "lowering the partition by hand during a release is undone and kept for the end", p: stsProfile,
			old: heldSTS("v2", restoreZero), update: heldSTS("v2", restoreZero),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "updateStrategy", "rollingUpdate", "partition")
			},
			wantChanged: true, wantPartition: int64(holdPartition),
			wantRestore: `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}`,
		},
		{
			name: "an apply that drops sluice's marks keeps them", p: stsProfile,
			old: heldSTS("v2", restoreZero), update: sts("v2", int64(0)),
			wantChanged: true, wantPartition: int64(holdPartition), wantRestore: restoreZero,
		},
		{
			name: "a new revision mid-release is held again", p: stsProfile,
			old: atStep(heldSTS("v2", restoreZero), 2), update: atStep(heldSTS("v3", restoreZero), 2),
			wantChanged: true, wantPartition: int64(holdPartition), wantRestore: restoreZero,
		},
		{
			name: "a rollback keeps the restore patch of a partition that was never set", p: stsProfile,
			old: atStep(heldSTS("v2", restoreNone), 2), update: atStep(heldSTS("v1", restoreNone), 2),
			wantChanged: true, wantPartition: int64(holdPartition), wantRestore: restoreNone,
		},
		{
			name: "only the partition is removed at the end when its parent holds more", p: stsProfile,
			old: sts("v1", nil), update: withMaxUnavailable(sts("v2", nil)),
			wantChanged: true, wantPartition: int64(holdPartition),
			wantRestore: `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":{"partition":null}}}}`,
		},
		{
			name: "CloneSet is held at 100% and gets its percentage back", p: csProfile,
			old: cloneSet("v1", "20%"), update: cloneSet("v2", "20%"),
			wantChanged: true, wantPartition: holdPercent,
			wantRestore: `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"partition":"20%"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutate != nil {
				tt.mutate(tt.update)
			}
			changed, why, err := hold(tt.p, tt.old, tt.update, "db")
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Fatalf("hold() changed = %v (%s), want %v", changed, why, tt.wantChanged)
			}
			got, _, _ := unstructured.NestedFieldNoCopy(tt.update.Object, tt.p.partition...)
			if got != tt.wantPartition {
				t.Fatalf("partition = %v (%T), want %v", got, got, tt.wantPartition)
			}
			if !tt.wantChanged {
				return
			}
			a := tt.update.GetAnnotations()
			if a[rolloutsv1beta1.InProgressingAnnotation] != `{"rolloutName":"db"}` {
				t.Fatalf("in-progressing = %q", a[rolloutsv1beta1.InProgressingAnnotation])
			}
			if !sameJSON(t, a[restoreAnnotation], tt.wantRestore) {
				t.Fatalf("restore patch\n got %s\nwant %s", a[restoreAnnotation], tt.wantRestore)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(bx) == string(by)
}

// The restore patch, applied as a JSON merge patch to the held object,
// gives back exactly the object the user had.
func TestRestorePatch_appliedToTheHeldObject_givesBackTheOriginal(t *testing.T) {
	stsProfile := testStatefulSet.p
	for _, original := range []*unstructured.Unstructured{sts("v2", int64(0)), sts("v2", int64(3)), sts("v2", nil), withMaxUnavailable(sts("v2", nil))} {
		updated := original.DeepCopy()
		if _, _, err := hold(stsProfile, sts("v1", nil), updated, "db"); err != nil {
			t.Fatal(err)
		}
		patched := mergePatch(t, updated.Object, updated.GetAnnotations()[restoreAnnotation])
		delete(patched["metadata"].(map[string]any), "annotations")
		delete(patched["metadata"].(map[string]any), "labels")
		if !sameJSON(t, mustJSON(patched), mustJSON(original.Object)) {
			t.Fatalf("restored\n %s\nwant\n %s", mustJSON(patched), mustJSON(original.Object))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// mergePatch applies a JSON merge patch (RFC 7386) to obj.
func mergePatch(t *testing.T, obj map[string]any, patch string) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatal(err)
	}
	var merge func(dst, src map[string]any) map[string]any
	merge = func(dst, src map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range dst {
			out[k] = v
		}
		for k, v := range src {
			switch sv := v.(type) {
			case nil:
				delete(out, k)
			case map[string]any:
				dv, _ := out[k].(map[string]any)
				out[k] = merge(dv, sv)
			default:
				out[k] = v
			}
		}
		return out
	}
	var o map[string]any
	_ = json.Unmarshal([]byte(mustJSON(obj)), &o)
	return merge(o, p)
}
