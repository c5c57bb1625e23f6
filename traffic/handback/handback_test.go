package handback

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func TestRecord_ownerAndRestore(t *testing.T) {
	selector := `{"f:spec":{"f:selector":{}}}`
	tests := []struct {
		name      string
		fields    []metav1.ManagedFieldsEntry
		value     any
		wantOwner string
		wantPatch string
	}{
		{"written by an update: back under that manager",
			[]metav1.ManagedFieldsEntry{entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, selector)},
			map[string]string{"app": "web"}, "kubectl-edit",
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/spec/selector","value":{"app":"web"}},{"op":"remove","path":"/metadata/annotations/sluice.dev~1original-selector"}]`},
		{"applied: back under sluice-handback",
			[]metav1.ManagedFieldsEntry{entry("argocd-controller", metav1.ManagedFieldsOperationApply, selector)},
			map[string]string{"app": "web"}, Manager, ""},
		{"sluice's own entry is skipped",
			[]metav1.ManagedFieldsEntry{entry("sluice", metav1.ManagedFieldsOperationApply, selector), entry("helm", metav1.ManagedFieldsOperationUpdate, selector)},
			map[string]string{"app": "web"}, "helm", ""},
		{"unknown owner, unset value: removed",
			[]metav1.ManagedFieldsEntry{entry("kubectl", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:ports":{}}}`)},
			nil, Manager,
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"remove","path":"/spec/selector"},{"op":"remove","path":"/metadata/annotations/sluice.dev~1original-selector"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New("web", tt.value, tt.fields, "spec", "selector")
			if err != nil {
				t.Fatal(err)
			}
			if r.Owner() != tt.wantOwner {
				t.Fatalf("Owner = %q, want %q", r.Owner(), tt.wantOwner)
			}
			back, err := Read(map[string]string{"sluice.dev/original-selector": r.Encode()}, "sluice.dev/original-selector")
			if err != nil || back.Rollout != "web" || string(back.Value) != string(r.Value) || back.Owner() != tt.wantOwner {
				t.Fatalf("Read = %+v, %v", back, err)
			}
			if tt.wantPatch == "" {
				return
			}
			base, err := back.Base(nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := RestorePatch(base, "7", "/spec/selector", "sluice.dev/original-selector")
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			_ = json.Unmarshal(p, &got)
			_ = json.Unmarshal([]byte(tt.wantPatch), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Fatalf("RestorePatch = %s\nwant %s", gb, wb)
			}
		})
	}
}

func TestRead_absentAndBroken(t *testing.T) {
	if r, err := Read(nil, "k"); r != nil || err != nil {
		t.Fatalf("absent: %+v, %v", r, err)
	}
	if _, err := Read(map[string]string{"k": "{"}, "k"); err == nil {
		t.Fatal("a broken record read without error")
	}
}
