package partition

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// userCloneSet is a CloneSet as its user configured it, running image,
// with updateStrategy strategy (none when nil) and minReadySeconds (none
// when 0).
func userCloneSet(image string, strategy map[string]any, minReadySeconds int64) *unstructured.Unstructured {
	u := cloneSet(image, nil)
	if strategy == nil {
		unstructured.RemoveNestedField(u.Object, "spec", "updateStrategy")
	} else {
		_ = unstructured.SetNestedField(u.Object, strategy, "spec", "updateStrategy")
	}
	if minReadySeconds != 0 {
		_ = unstructured.SetNestedField(u.Object, minReadySeconds, "spec", "minReadySeconds")
	}
	return u
}

// applied returns u with the merge patch applied, as the API server
// stores it.
func applied(t *testing.T, u *unstructured.Unstructured, patch map[string]any) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: mergePatch(t, u.Object, mustJSON(patch))}
}

// claimAndUpgrade does what a blue-green release writes on a CloneSet the
// webhook held: Claim, then the step of desired pods.
func claimAndUpgrade(t *testing.T, p profile, held *unstructured.Unstructured, desired int32) *unstructured.Unstructured {
	t.Helper()
	claimed, changed, err := claimBlueGreen(p, held.GetAnnotations()[restoreAnnotation], held.Object)
	if err != nil || !changed {
		t.Fatalf("claimBlueGreen() changed %v, %v", changed, err)
	}
	claim := blueGreenSpec(p, held.Object, planBlueGreen(0, 0))
	claim["metadata"] = map[string]any{"annotations": map[string]any{restoreAnnotation: claimed}}
	u := applied(t, held, claim)
	if again, changed, _ := claimBlueGreen(p, claimed, u.Object); changed || again != claimed {
		t.Fatalf("a second claim changed the restore patch:\n %s\n %s", claimed, again)
	}
	return applied(t, u, blueGreenSpec(p, u.Object, planBlueGreen(desired, 0)))
}

// restored is u once its restore patch is applied, without annotations
// and labels.
func restored(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	out := mergePatch(t, u.Object, u.GetAnnotations()[restoreAnnotation])
	meta := out["metadata"].(map[string]any)
	if len(meta["annotations"].(map[string]any)) != 0 || len(meta["labels"].(map[string]any)) != 0 {
		t.Fatalf("marks left after the restore patch: %s", mustJSON(meta))
	}
	delete(meta, "annotations")
	delete(meta, "labels")
	return out
}

// Given CloneSets configured in several ways, held by the webhook for a
// new revision and claimed for a blue-green release at step 2 of 4 pods
// Then the CloneSet has no partition, maxSurge 2, maxUnavailable 0 and
// the inflated minReadySeconds, and its restore patch gives back exactly
// what its user configured.
func TestBlueGreen_restorePatch_givesBackTheOriginal(t *testing.T) {
	p := testCloneSet.p
	for name, original := range map[string]*unstructured.Unstructured{
		"OpenKruise's defaults":        userCloneSet("v2", map[string]any{"type": "ReCreate", "maxUnavailable": "20%", "maxSurge": int64(0), "partition": int64(0)}, 0),
		"maxUnavailable only":          userCloneSet("v2", map[string]any{"type": "ReCreate", "maxUnavailable": "50%"}, 0),
		"surge, partition, timing":     userCloneSet("v2", map[string]any{"maxUnavailable": int64(1), "maxSurge": "25%", "partition": "20%"}, 10),
		"no update strategy at all":    userCloneSet("v2", nil, 0),
		"a partition and nothing else": userCloneSet("v2", map[string]any{"partition": int64(1)}, 0),
	} {
		t.Run(name, func(t *testing.T) {
			held := original.DeepCopy()
			if _, _, err := hold(p, userCloneSet("v1", nil, 0), held, "db"); err != nil {
				t.Fatal(err)
			}
			u := claimAndUpgrade(t, p, held, 2)
			if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, p.partition...); found {
				t.Errorf("partition %v while releasing, want none", v)
			}
			for _, f := range []struct {
				path []string
				want int64
			}{{p.maxSurge, 2}, {p.maxUnavailable, 0}, {p.minReadySeconds, heldMinReadySeconds}} {
				if got, ok := nestedNumber(u.Object, f.path); !ok || got != f.want {
					t.Errorf("%v = %v, want %d", f.path, got, f.want)
				}
			}
			if !sameJSON(t, mustJSON(restored(t, u)), mustJSON(original.Object)) {
				t.Fatalf("restored\n %s\nwant\n %s", mustJSON(restored(t, u)), mustJSON(original.Object))
			}
		})
	}
}

// Given a CloneSet in a blue-green release
// When its user changes maxUnavailable, and later re-applies a manifest
// without sluice's fields and marks
// Then the webhook keeps sluice's values and marks, and the restore patch
// gives back the user's latest values.
func TestBlueGreen_userChangesMidRelease_keptForTheEnd(t *testing.T) {
	p := testCloneSet.p
	original := userCloneSet("v2", map[string]any{"type": "ReCreate", "maxUnavailable": "50%"}, 0)
	held := original.DeepCopy()
	if _, _, err := hold(p, userCloneSet("v1", nil, 0), held, "db"); err != nil {
		t.Fatal(err)
	}
	stored := claimAndUpgrade(t, p, held, 2)

	edited := stored.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, "30%", p.maxUnavailable...)
	_ = unstructured.SetNestedField(edited.Object, int64(5), p.minReadySeconds...)
	if changed, why, err := hold(p, stored, edited, "db"); err != nil || !changed {
		t.Fatalf("hold() = %v (%s), %v", changed, why, err)
	}
	for _, f := range []struct {
		path []string
		want int64
	}{{p.maxSurge, 2}, {p.maxUnavailable, 0}, {p.minReadySeconds, heldMinReadySeconds}} {
		if got, ok := nestedNumber(edited.Object, f.path); !ok || got != f.want {
			t.Errorf("after the user's edit %v = %v, want sluice's %d", f.path, got, f.want)
		}
	}
	want := original.DeepCopy()
	_ = unstructured.SetNestedField(want.Object, "30%", p.maxUnavailable...)
	_ = unstructured.SetNestedField(want.Object, int64(5), p.minReadySeconds...)
	if got := restored(t, edited); !sameJSON(t, mustJSON(got), mustJSON(want.Object)) {
		t.Fatalf("restored after the edit\n %s\nwant\n %s", mustJSON(got), mustJSON(want.Object))
	}

	reapplied := original.DeepCopy() // the manifest: no marks, the user's strategy
	if changed, why, err := hold(p, edited, reapplied, "db"); err != nil || !changed {
		t.Fatalf("hold() = %v (%s), %v", changed, why, err)
	}
	if got, _ := nestedNumber(reapplied.Object, p.maxSurge); got != 2 {
		t.Errorf("maxSurge after a re-apply %d, want sluice's 2", got)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(reapplied.Object, p.partition...); found {
		t.Errorf("a re-apply brought a partition back")
	}
	if reapplied.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation] == "" {
		t.Errorf("a re-apply dropped the in-progressing mark")
	}
	if got := restored(t, reapplied); !sameJSON(t, mustJSON(got), mustJSON(original.Object)) {
		t.Fatalf("restored after the re-apply\n %s\nwant\n %s", mustJSON(got), mustJSON(original.Object))
	}
}

func TestPlanBlueGreen(t *testing.T) {
	tests := []struct {
		name             string
		desired, updated int32
		want             blueGreenGate
	}{
		{"nothing to release holds", 0, 0, blueGreenGate{Hold: true, MaxSurge: 1}},
		{"held with new pods keeps them surging", 0, 3, blueGreenGate{Hold: true, MaxSurge: 3}},
		{"a step surges its pods", 2, 0, blueGreenGate{MaxSurge: 2}},
		{"a larger step surges more", 4, 2, blueGreenGate{MaxSurge: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planBlueGreen(tt.desired, tt.updated); got != tt.want {
				t.Fatalf("planBlueGreen(%d, %d) = %+v, want %+v", tt.desired, tt.updated, got, tt.want)
			}
		})
	}
}

func TestBlueGreenSpec(t *testing.T) {
	p := testCloneSet.p
	gated := func(partition any, surge, unavailable any, minReady any) *unstructured.Unstructured {
		u := userCloneSet("v2", map[string]any{"maxSurge": surge, "maxUnavailable": unavailable}, 0)
		if partition != nil {
			_ = unstructured.SetNestedField(u.Object, partition, p.partition...)
		}
		_ = unstructured.SetNestedField(u.Object, minReady, p.minReadySeconds...)
		return u
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		g    blueGreenGate
		want string
	}{
		{
			name: "at the gate: nothing to write",
			obj:  gated(nil, int64(2), int64(0), int64(heldMinReadySeconds)), g: blueGreenGate{MaxSurge: 2},
			want: `{}`,
		},
		{
			name: "the next step: only maxSurge",
			obj:  gated(nil, int64(2), int64(0), int64(heldMinReadySeconds)), g: blueGreenGate{MaxSurge: 4},
			want: `{"spec":{"updateStrategy":{"maxSurge":4}}}`,
		},
		{
			name: "held by the webhook: the partition is cleared",
			obj:  gated(holdPercent, int64(1), int64(0), int64(heldMinReadySeconds)), g: blueGreenGate{MaxSurge: 2},
			want: `{"spec":{"updateStrategy":{"partition":null,"maxSurge":2}}}`,
		},
		{
			name: "claimed: the user's values give way",
			obj:  gated(holdPercent, "25%", "50%", int64(10)), g: blueGreenGate{Hold: true, MaxSurge: 1},
			want: `{"spec":{"minReadySeconds":2147483646,"updateStrategy":{"maxSurge":1,"maxUnavailable":0}}}`,
		},
		{
			name: "holding a CloneSet without a partition sets it",
			obj:  gated(nil, int64(1), int64(0), int64(heldMinReadySeconds)), g: blueGreenGate{Hold: true, MaxSurge: 1},
			want: `{"spec":{"updateStrategy":{"partition":"100%"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustJSON(blueGreenSpec(p, tt.obj.Object, tt.g)); !sameJSON(t, got, tt.want) {
				t.Fatalf("blueGreenSpec() = %s, want %s", got, tt.want)
			}
		})
	}
}

// Given a CloneSet claimed for a blue-green release
// Then it is settled with pods above replicas (the new ones beside the
// old), a nil failureThreshold tolerates the user's maxUnavailable, and an
// InPlaceOnly CloneSet cannot be released blue-green.
func TestBlueGreenStatus(t *testing.T) {
	p := testCloneSet.p
	held := userCloneSet("v2", map[string]any{"type": "ReCreate", "maxUnavailable": "50%"}, 0)
	if _, _, err := hold(p, userCloneSet("v1", nil, 0), held, "db"); err != nil {
		t.Fatal(err)
	}
	u := claimAndUpgrade(t, p, held, 2)
	u = withStatus(u, 3, map[string]any{"observedGeneration": int64(3), "replicas": int64(6), "updatedReplicas": int64(2),
		"updatedReadyReplicas": int64(2), "currentRevision": "db-1", "updateRevision": "db-2"})
	o := object{p: p, u: u}
	s := statusOf(o, podView{}, "")
	if s.Settled {
		t.Fatalf("a partition release would not call 6 pods of 4 settled")
	}
	blueGreenStatus(s, o)
	if !s.Settled || s.MaxUnavailable != 2 || s.Unsupported != "" || s.UpToDate {
		t.Fatalf("status %+v, want settled, maxUnavailable 2 (the user's 50%%), supported, not up to date", s)
	}
	_ = unstructured.SetNestedField(u.Object, int64(5), "status", "replicas")
	s = statusOf(o, podView{}, "")
	blueGreenStatus(s, o)
	if !s.Settled {
		t.Fatalf("5 pods of 4 replicas: not settled")
	}
	_ = unstructured.SetNestedField(u.Object, int64(3), "status", "replicas")
	s = statusOf(o, podView{}, "")
	blueGreenStatus(s, o)
	if s.Settled {
		t.Fatalf("3 pods of 4 replicas: settled")
	}

	inPlace := userCloneSet("v1", map[string]any{"type": inPlaceOnly}, 0)
	s = statusOf(object{p: p, u: inPlace}, podView{}, "")
	blueGreenStatus(s, object{p: p, u: inPlace})
	if s.Unsupported == "" {
		t.Fatalf("InPlaceOnly CloneSet reported releasable blue-green")
	}
}
