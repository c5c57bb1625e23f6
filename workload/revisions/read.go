package revisions

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Store names the kind of object that keeps a workload's revisions; the
// workload kinds table (workload/kinds) says which for each kind.
type Store string

// The objects that keep revisions.
const (
	// ReplicaSets keep a Deployment's revisions.
	ReplicaSets Store = "ReplicaSet"
	// ControllerRevisions keep the revisions of the other kinds.
	ControllerRevisions Store = "ControllerRevision"
)

// List reads the revisions the workload w keeps in objects of kind kept, by
// revision number: a Deployment's ReplicaSets, the ControllerRevisions of
// any other kind.
func List(ctx context.Context, r client.Reader, w client.Object, kept Store) ([]Revision, error) {
	if kept == ReplicaSets {
		list := &appsv1.ReplicaSetList{}
		if err := r.List(ctx, list, client.InNamespace(w.GetNamespace())); err != nil {
			return nil, fmt.Errorf("listing the replicasets of deployment %s/%s: %w", w.GetNamespace(), w.GetName(), err)
		}
		return FromReplicaSets(w.GetUID(), list.Items), nil
	}
	list := &appsv1.ControllerRevisionList{}
	if err := r.List(ctx, list, client.InNamespace(w.GetNamespace())); err != nil {
		return nil, fmt.Errorf("listing the controllerrevisions of %s %s/%s: %w", w.GetObjectKind().GroupVersionKind().Kind, w.GetNamespace(), w.GetName(), err)
	}
	return FromControllerRevisions(w.GetUID(), list.Items), nil
}

// TemplateOf reads the pod template at spec.template of a workload of any
// kind.
func TemplateOf(w *unstructured.Unstructured) (*corev1.PodTemplateSpec, error) {
	raw, found, err := unstructured.NestedMap(w.Object, "spec", "template")
	if err != nil || !found {
		return nil, fmt.Errorf("no pod template at spec.template")
	}
	tpl := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, tpl); err != nil {
		return nil, fmt.Errorf("reading spec.template: %w", err)
	}
	return tpl, nil
}
