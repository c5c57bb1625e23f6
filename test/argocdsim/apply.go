package argocdsim

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the field manager Argo CD's application controller
// writes with, for client-side and server-side apply alike.
const FieldManager = "argocd-controller"

// LastAppliedAnnotation is where a client-side apply keeps the manifest it
// applied last, to compute the next three-way patch.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// applyClientSide applies obj the way `kubectl apply` does and reports
// whether it wrote anything. The patch carries the live object's
// resourceVersion, so that it never lands on a state it was not computed
// from; a conflict is left to the next pass.
func (s *Sim) applyClientSide(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	modified, err := withLastApplied(obj)
	if err != nil {
		return false, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err = s.c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if apierrors.IsNotFound(err) {
		if err := s.c.Create(ctx, obj, client.FieldOwner(FieldManager)); err != nil {
			return false, fmt.Errorf("creating %s: %w", describe(obj), err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", describe(obj), err)
	}
	original := []byte(live.GetAnnotations()[LastAppliedAnnotation])
	if len(original) == 0 {
		original = nil
	}
	current, err := json.Marshal(live.Object)
	if err != nil {
		return false, err
	}
	var (
		patch []byte
		pt    types.PatchType
	)
	if typed, err := clientgoscheme.Scheme.New(obj.GroupVersionKind()); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return false, err
		}
		patch, err = strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		if err != nil {
			return false, fmt.Errorf("computing the patch of %s: %w", describe(obj), err)
		}
		pt = types.StrategicMergePatchType
	} else {
		patch, err = jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
		if err != nil {
			return false, fmt.Errorf("computing the patch of %s: %w", describe(obj), err)
		}
		pt = types.MergePatchType
	}
	if string(patch) == "{}" {
		return false, nil
	}
	if patch, err = withResourceVersion(patch, live.GetResourceVersion()); err != nil {
		return false, err
	}
	if err := s.c.Patch(ctx, live, client.RawPatch(pt, patch), client.FieldOwner(FieldManager)); err != nil {
		return false, fmt.Errorf("patching %s: %w", describe(obj), err)
	}
	return true, nil
}

// applyServerSide applies obj with server-side apply as argocd-controller,
// taking over conflicting fields, and reports whether the object changed.
// A server-side dry run first tells whether the apply would change
// anything; only then is it applied.
func (s *Sim) applyServerSide(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := s.c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return false, fmt.Errorf("reading %s: %w", describe(obj), err)
	}
	if live != nil {
		dry := obj.DeepCopy()
		if err := s.c.Patch(ctx, dry, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil { //nolint:staticcheck // unstructured apply
			return false, fmt.Errorf("applying %s (dry run): %w", describe(obj), err)
		}
		if equality.Semantic.DeepEqual(desiredState(live), desiredState(dry)) {
			return false, nil
		}
	}
	if err := s.c.Patch(ctx, obj.DeepCopy(), client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil { //nolint:staticcheck // unstructured apply
		return false, fmt.Errorf("applying %s: %w", describe(obj), err)
	}
	return true, nil
}

// desiredState is an object without what its controllers and the API server
// write on their own: status and the bookkeeping metadata.
func desiredState(u *unstructured.Unstructured) map[string]any {
	out := u.DeepCopy().Object
	delete(out, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(out, "metadata", f)
	}
	return out
}

// withLastApplied sets the last-applied annotation of obj to obj itself (as
// kubectl does: the manifest without that annotation) and returns obj's
// JSON.
func withLastApplied(obj *unstructured.Unstructured) ([]byte, error) {
	ann := obj.GetAnnotations()
	delete(ann, LastAppliedAnnotation)
	obj.SetAnnotations(ann)
	last, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[LastAppliedAnnotation] = string(last)
	obj.SetAnnotations(ann)
	return json.Marshal(obj.Object)
}

// withResourceVersion adds metadata.resourceVersion to a JSON patch object.
func withResourceVersion(patch []byte, rv string) ([]byte, error) {
	m := map[string]any{}
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = rv
	m["metadata"] = meta
	return json.Marshal(m)
}

// describe names obj for errors ("Deployment shop/checkout").
func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}
