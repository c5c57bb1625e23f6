package revisions

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestTemplateOf(t *testing.T) {
	tpl := template("app:v1")
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tpl)
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": raw}}}
	got, err := TemplateOf(w)
	if err != nil || !Equal(got, &tpl) {
		t.Fatalf("TemplateOf() = %+v, %v; want %+v", got, err, tpl)
	}
	if _, err := TemplateOf(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}); err == nil {
		t.Fatal("TemplateOf() of a workload without spec.template: no error")
	}
}

// List reads the ReplicaSets of a Deployment and the ControllerRevisions
// of any other kind, keeping those the workload controls.
func TestList(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	v1, v2 := template("app:v1"), template("app:v2")
	rs := func(name, hash string, uid string, tpl corev1.PodTemplateSpec) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{podTemplateHashLabel: hash},
				OwnerReferences: controlled(types.UID(uid))},
			Spec: appsv1.ReplicaSetSpec{Template: tpl},
		}
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ledger-abc", Labels: map[string]string{controllerRevisionHashLabel: "ledger-abc"},
			OwnerReferences: controlled(owner)},
		Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"app","image":"app:v1"}]}}}}`)},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		rs("checkout-a", "a", string(owner), v1), rs("checkout-b", "b", string(owner), v2), rs("other-c", "c", "someone-else", v1), cr,
	).Build()
	ctx := context.Background()

	d := &unstructured.Unstructured{}
	d.SetNamespace("shop")
	d.SetName("checkout")
	d.SetUID(owner)
	revs, err := List(ctx, c, d, ReplicaSets)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || revs[0].Kind != "ReplicaSet" {
		t.Fatalf("List(Deployment) = %+v, want the 2 ReplicaSets of checkout", revs)
	}
	if r, ok := Find(revs, "b"); !ok || r.Template == nil || r.Template.Spec.Containers[0].Image != "app:v2" {
		t.Fatalf("Find(b) = %+v, %v; want the template of app:v2", r, ok)
	}

	revs, err = List(ctx, c, d, ControllerRevisions)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].Kind != "ControllerRevision" || revs[0].Template == nil || revs[0].Template.Spec.Containers[0].Image != "app:v1" {
		t.Fatalf("List(StatefulSet) = %+v, want ControllerRevision ledger-abc with app:v1", revs)
	}
}
