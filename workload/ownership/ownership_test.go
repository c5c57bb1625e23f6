package ownership

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

const restoreKey = rolloutsv1beta1.DeploymentOriginalAnnotation

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func TestRecordAndHandBack(t *testing.T) {
	before := []metav1.ManagedFieldsEntry{
		entry("gitops", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:minReadySeconds":{},"f:replicas":{},"f:strategy":{"f:rollingUpdate":{"f:maxSurge":{}}}}}`),
		entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}}}`),
	}
	owners, err := Record(before, "spec.minReadySeconds", "spec.strategy.rollingUpdate.maxSurge", "spec.paused")
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != 2 || owners["spec.minReadySeconds"][0].Manager != "gitops" || owners["spec.paused"] != nil {
		t.Fatalf("Record = %v", owners)
	}
	round, err := Read(owners.Encode())
	if err != nil {
		t.Fatal(err)
	}
	// After the release: sluice's updates took the fields from gitops.
	after := []metav1.ManagedFieldsEntry{
		entry("gitops", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{}}}`),
		before[1],
		entry("sluice", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:minReadySeconds":{},"f:paused":{},"f:strategy":{"f:rollingUpdate":{"f:maxSurge":{}}}}}`),
	}
	got, changed, err := HandBack(after, round, func(string) bool { return true }, time.Now())
	if err != nil || !changed {
		t.Fatalf("HandBack: changed %v, err %v", changed, err)
	}
	if len(got) != 2 {
		t.Fatalf("entries %v, want gitops and kube-controller-manager", got)
	}
	want := `{"f:spec":{"f:minReadySeconds":{},"f:replicas":{},"f:strategy":{"f:rollingUpdate":{"f:maxSurge":{}}}}}`
	if got[0].FieldsV1.GetRawString() != want {
		t.Errorf("gitops owns %s, want %s", got[0].FieldsV1.GetRawString(), want)
	}
	if _, changed, _ := HandBack(got, round, func(string) bool { return true }, time.Now()); changed {
		t.Error("a second HandBack changed something")
	}
	// A field that no longer exists is not given back; an owner whose
	// entry is gone gets one.
	got, _, _ = HandBack([]metav1.ManagedFieldsEntry{after[2]}, round, func(p string) bool { return p == "spec.minReadySeconds" }, time.Now())
	if len(got) != 1 || got[0].Manager != "gitops" || got[0].FieldsV1.GetRawString() != `{"f:spec":{"f:minReadySeconds":{}}}` {
		t.Errorf("got %+v", got)
	}
	// Only sluice: one empty entry clears managedFields.
	got, _, _ = HandBack([]metav1.ManagedFieldsEntry{after[2]}, Owners{}, func(string) bool { return true }, time.Now())
	if len(got) != 1 || got[0].Manager != "" {
		t.Errorf("got %+v", got)
	}
}

func TestRecordInto_onlyBesideARestorePatchThatRemovesIt(t *testing.T) {
	mf := []metav1.ManagedFieldsEntry{entry("gitops", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:minReadySeconds":{}}}`)}
	removing := `{"metadata":{"annotations":{"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null}},"spec":{}}`
	legacy := `{"metadata":{"annotations":{"sluice.dev/restore-patch":null}},"spec":{}}`
	for _, tc := range []struct {
		name string
		// own are the workload's annotations; claim those the claim writes.
		own, claim map[string]string
		want       bool
	}{
		{name: "restore patch written by the claim", claim: map[string]string{restoreKey: removing}, want: true},
		{name: "restore patch written by the webhook", own: map[string]string{restoreKey: removing}, want: true},
		{name: "restore patch of an older sluice", own: map[string]string{restoreKey: legacy}},
		{name: "no restore patch", own: map[string]string{}},
		{name: "recorded already", own: map[string]string{restoreKey: removing, Annotation: "{}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Annotations: tc.own, ManagedFields: mf}
			annotations := map[string]any{}
			for k, v := range tc.claim {
				annotations[k] = v
			}
			if err := RecordInto(annotations, obj, "spec.minReadySeconds"); err != nil {
				t.Fatal(err)
			}
			got, ok := annotations[Annotation]
			if ok != tc.want {
				t.Fatalf("record written %v (%v), want %v", ok, got, tc.want)
			}
			if ok && got != `{"spec.minReadySeconds":[{"manager":"gitops","operation":"Apply","apiVersion":"apps/v1"}]}` {
				t.Errorf("record %v", got)
			}
		})
	}
}

func TestKeepRecord_leavesTheRestOfTheRestorePatch(t *testing.T) {
	var patch map[string]any
	raw := `{"metadata":{"annotations":{"sluice.dev/field-owners":null,"sluice.dev/restore-patch":null},"labels":{"x":null}},"spec":{"paused":false}}`
	if err := json.Unmarshal([]byte(raw), &patch); err != nil {
		t.Fatal(err)
	}
	KeepRecord(patch)
	got, _ := json.Marshal(patch)
	want := `{"metadata":{"annotations":{"sluice.dev/restore-patch":null},"labels":{"x":null}},"spec":{"paused":false}}`
	if string(got) != want {
		t.Errorf("KeepRecord = %s, want %s", got, want)
	}
	KeepRecord(map[string]any{"spec": map[string]any{}}) // no metadata: nothing to do
}

func TestHandBackPatch(t *testing.T) {
	owners := Owners{"spec.minReadySeconds": {{Manager: "gitops", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1"}}}
	sluice := entry("sluice", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:minReadySeconds":{}}}`)
	content := map[string]any{"spec": map[string]any{"minReadySeconds": int64(3)}}
	obj := &metav1.ObjectMeta{ResourceVersion: "7", Annotations: map[string]string{Annotation: owners.Encode()}, ManagedFields: []metav1.ManagedFieldsEntry{sluice}}
	raw, err := HandBackPatch(obj, content, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].Op != "test" || string(ops[0].Value) != `"7"` || ops[1].Path != "/metadata/managedFields" ||
		!strings.Contains(string(ops[1].Value), `"manager":"gitops"`) || strings.Contains(string(ops[1].Value), `"manager":"sluice"`) ||
		ops[2].Op != "remove" || ops[2].Path != "/metadata/annotations/sluice.dev~1field-owners" {
		t.Fatalf("HandBackPatch = %s", raw)
	}
	// Handed back already: nothing to write.
	done := &metav1.ObjectMeta{ResourceVersion: "8", ManagedFields: []metav1.ManagedFieldsEntry{entry("gitops", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:minReadySeconds":{}}}`)}}
	if raw, err := HandBackPatch(done, content, time.Unix(0, 0)); err != nil || raw != nil {
		t.Errorf("HandBackPatch of a handed-back object = %s, %v; want nil", raw, err)
	}
}
