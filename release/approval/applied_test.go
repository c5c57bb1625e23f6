package approval

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApplied(t *testing.T) {
	const key = "sluice.dev/approve"
	owns := metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:sluice.dev/approve":{}}}}`)
	other := metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:team":{}}},"f:spec":{}}`)
	entry := func(manager string, op metav1.ManagedFieldsOperationType, f *metav1.FieldsV1) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: f}
	}
	lastApplied := func(value string) string {
		return `{"apiVersion":"rollouts.kruise.io/v1beta1","kind":"Rollout","metadata":{"annotations":{"sluice.dev/approve":"` + value + `"}}}`
	}
	tests := []struct {
		name        string
		annotations map[string]string
		fields      []metav1.ManagedFieldsEntry
		want        bool
	}{
		{name: "server-side applied (Flux)", annotations: map[string]string{key: "step=2,revision=abc"},
			fields: []metav1.ManagedFieldsEntry{entry("kustomize-controller", metav1.ManagedFieldsOperationApply, owns)}, want: true},
		{name: "two appliers of the same value", annotations: map[string]string{key: "2"},
			fields: []metav1.ManagedFieldsEntry{entry("kustomize-controller", metav1.ManagedFieldsOperationApply, owns), entry("kubectl", metav1.ManagedFieldsOperationApply, owns)}, want: true},
		{name: "written by hand after an apply", annotations: map[string]string{key: "step=2,revision=abc"},
			fields: []metav1.ManagedFieldsEntry{entry("kustomize-controller", metav1.ManagedFieldsOperationApply, other), entry("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, owns)}},
		{name: "written by sluice's gate", annotations: map[string]string{key: `{"step":2,"by":"jane"}`},
			fields: []metav1.ManagedFieldsEntry{entry("sluice-gitops", metav1.ManagedFieldsOperationUpdate, owns)}},
		{name: "status entries do not count", annotations: map[string]string{key: "2"},
			fields: []metav1.ManagedFieldsEntry{{Manager: "x", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsV1: owns}}},
		{name: "client-side applied (Argo CD)", annotations: map[string]string{key: "2", lastAppliedAnnotation: lastApplied("2")},
			fields: []metav1.ManagedFieldsEntry{entry("argocd-application-controller", metav1.ManagedFieldsOperationUpdate, owns)}, want: true},
		{name: "annotated by hand after a client-side apply", annotations: map[string]string{key: "3", lastAppliedAnnotation: lastApplied("2")},
			fields: []metav1.ManagedFieldsEntry{entry("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, owns)}},
		{name: "a damaged last-applied configuration", annotations: map[string]string{key: "2", lastAppliedAnnotation: "{"}},
		{name: "no annotation", annotations: map[string]string{lastAppliedAnnotation: lastApplied("2")},
			fields: []metav1.ManagedFieldsEntry{entry("kustomize-controller", metav1.ManagedFieldsOperationApply, owns)}},
		{name: "no managed fields", annotations: map[string]string{key: "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Annotations: tt.annotations, ManagedFields: tt.fields}
			if got := Applied(obj, key); got != tt.want {
				t.Errorf("Applied = %v, want %v", got, tt.want)
			}
		})
	}
}
