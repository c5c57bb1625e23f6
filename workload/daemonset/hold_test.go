package daemonset

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// daemonSet is a DaemonSet of image with the RollingUpdate strategy and
// maxUnavailable 2.
func daemonSet(image string) *appsv1.DaemonSet {
	two, zero := intstr.FromInt32(2), intstr.FromInt32(0)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Annotations: map[string]string{}, Labels: map[string]string{}},
		Spec: appsv1.DaemonSetSpec{
			Template: template(image),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two, MaxSurge: &zero},
			},
		},
	}
}

// heldDaemonSet is daemonSet(image) as the webhook leaves it for a release.
func heldDaemonSet(image string) *appsv1.DaemonSet {
	ds := daemonSet(image)
	if changed, _ := holdDaemonSet(daemonSet("registry.example/a:v0"), ds, "agent"); !changed {
		panic("not held")
	}
	return ds
}

func restoreOf(t *testing.T, ds *appsv1.DaemonSet) restorePatch {
	t.Helper()
	p, ok, err := readRestorePatch(ds)
	if err != nil || !ok {
		t.Fatalf("restore patch: ok=%v err=%v", ok, err)
	}
	return p
}

func TestHoldDaemonSet(t *testing.T) {
	v1, v2 := "registry.example/a:v1", "registry.example/a:v2"
	three := intstr.FromInt32(3)
	tests := []struct {
		name         string
		old, update  *appsv1.DaemonSet
		mutate       func(*appsv1.DaemonSet)
		wantChanged  bool
		wantType     appsv1.DaemonSetUpdateStrategyType
		wantRestored appsv1.DaemonSetUpdateStrategyType
		wantMaxUnav  string
	}{
		{
			name: "template change is held with OnDelete and the strategy recorded",
			old:  daemonSet(v1), update: daemonSet(v2),
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "2",
		},
		{
			name: "the strategy of the update itself is the one recorded",
			old:  daemonSet(v1), update: daemonSet(v2),
			mutate:      func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &three },
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "3",
		},
		{
			name: "no change passes",
			old:  daemonSet(v1), update: daemonSet(v1),
			wantType: appsv1.RollingUpdateDaemonSetStrategyType,
		},
		{
			name: "a label change passes",
			old:  daemonSet(v1), update: daemonSet(v1),
			mutate:   func(ds *appsv1.DaemonSet) { ds.Labels["team"] = "a" },
			wantType: appsv1.RollingUpdateDaemonSetStrategyType,
		},
		{
			name: "rollout-id change is held",
			old:  daemonSet(v1), update: daemonSet(v1),
			mutate:      func(ds *appsv1.DaemonSet) { ds.Annotations[rolloutsv1beta1.RolloutIDLabel] = "r2" },
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "2",
		},
		{
			name: "RollingUpdate set back during a release is kept OnDelete and recorded",
			old:  heldDaemonSet(v2), update: heldDaemonSet(v2),
			mutate: func(ds *appsv1.DaemonSet) {
				ds.Spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
				ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &three
			},
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "3",
		},
		{
			// OnDelete written during a release cannot be told from the held
			// value sent back: only the rollingUpdate change is recorded.
			name: "OnDelete written during a release is the held value",
			old:  heldDaemonSet(v2), update: heldDaemonSet(v2),
			mutate: func(ds *appsv1.DaemonSet) {
				ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
			},
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "",
		},
		{
			name: "sluice's marks removed by a re-apply are kept",
			old:  heldDaemonSet(v2), update: daemonSet(v2),
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "2",
		},
		{
			name: "a new template during a release stays held",
			old:  heldDaemonSet(v2), update: heldDaemonSet("registry.example/a:v3"),
			wantChanged: true, wantType: appsv1.OnDeleteDaemonSetStrategyType,
			wantRestored: appsv1.RollingUpdateDaemonSetStrategyType, wantMaxUnav: "2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutate != nil {
				tt.mutate(tt.update)
			}
			changed, why := holdDaemonSet(tt.old, tt.update, "agent")
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v (%s), want %v", changed, why, tt.wantChanged)
			}
			if got := tt.update.Spec.UpdateStrategy.Type; got != tt.wantType {
				t.Fatalf("strategy %s, want %s", got, tt.wantType)
			}
			if !tt.wantChanged {
				if len(tt.update.Annotations) != 0 {
					t.Fatalf("annotations %v on an update that is not held", tt.update.Annotations)
				}
				return
			}
			if got := workload.InProgressRollout(tt.update.Annotations); got != "agent" {
				t.Fatalf("in-progressing names %q", got)
			}
			p := restoreOf(t, tt.update)
			if p.Spec.UpdateStrategy.Type != tt.wantRestored {
				t.Fatalf("restore patch strategy %s, want %s", p.Spec.UpdateStrategy.Type, tt.wantRestored)
			}
			got := ""
			if ru := p.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
				got = ru.MaxUnavailable.String()
			}
			if got != tt.wantMaxUnav {
				t.Fatalf("restore patch maxUnavailable %q, want %q", got, tt.wantMaxUnav)
			}
		})
	}
}

// TestHold_unstructured checks the webhook entry point end to end: the
// update comes back changed, and the restore patch it carries sets the
// strategy back and removes every mark of the release.
func TestHold_unstructured(t *testing.T) {
	toU := func(ds *appsv1.DaemonSet) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ds)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	updated := toU(daemonSet("registry.example/a:v2"))
	changed, _, err := Hold(toU(daemonSet("registry.example/a:v1")), updated, "agent")
	if err != nil || !changed {
		t.Fatalf("Hold = %v, %v", changed, err)
	}
	typ, _, _ := unstructured.NestedString(updated.Object, "spec", "updateStrategy", "type")
	if typ != string(appsv1.OnDeleteDaemonSetStrategyType) {
		t.Fatalf("strategy %s", typ)
	}
	raw := updated.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
	var patch map[string]any
	if err := json.Unmarshal([]byte(raw), &patch); err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"batchrelease.rollouts.kruise.io/control-info":null,"rollouts.kruise.io/in-progressing":null,"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"rollouts.kruise.io/stable-revision":null}},"spec":{"updateStrategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":2},"type":"RollingUpdate"}}}`
	if b, _ := json.Marshal(patch); string(b) != want {
		t.Fatalf("restore patch\n%s\nwant\n%s", b, want)
	}
}
