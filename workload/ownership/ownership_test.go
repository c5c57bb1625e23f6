package ownership

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
