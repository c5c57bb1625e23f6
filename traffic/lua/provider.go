package lua

import (
	"context"
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/handback"
)

var _ traffic.Provider = (*Router)(nil)

// Router drives one object of customNetworkRefs with its kind's script.
type Router struct {
	client client.Client
	reader client.Reader
	t      traffic.Target
	gvk    schema.GroupVersionKind
	name   string
	limits Limits
	opts   Options
}

// New returns the Router of the object ref of the entry t.Ref. It reads
// through reader (the object and the ConfigMap of scripts) and writes
// through c; the object is read and written as unstructured, so any kind
// the cluster serves will do. opts says where the scripts are.
func New(c client.Client, reader client.Reader, t traffic.Target, ref rolloutsv1beta1.ObjectRef, opts Options) (*Router, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("customNetworkRefs %s/%s: apiVersion: %w", ref.Kind, ref.Name, err)
	}
	if ref.Kind == "" || ref.Name == "" {
		return nil, fmt.Errorf("customNetworkRefs entry %q/%q needs a kind and a name", ref.Kind, ref.Name)
	}
	return &Router{client: c, reader: reader, t: t, gvk: gv.WithKind(ref.Kind), name: ref.Name, limits: DefaultLimits(), opts: opts}, nil
}

// what names the object in messages.
func (r *Router) what() string {
	return r.gvk.Kind + " " + r.name
}

// record is the content of OriginalAnnotation: the object's data before
// the release (OpenKruise's shape) and the Rollout that changes it (which
// OpenKruise does not write, and ignores).
type record struct {
	Data
	// Rollout is the Rollout whose release changes the object.
	Rollout string `json:"rollout,omitempty"`
	// Applied is the spec sluice last wrote (which OpenKruise does not
	// write either). With it, sluice reverts only its own change of the
	// live spec (see handback.Revert); a record without it, as OpenKruise
	// writes, restores Spec as it is.
	Applied map[string]any `json:"applied,omitempty"`
}

// base is the live spec of u with the change sluice recorded in rec
// reverted: what someone else changed in the spec mid-release is kept.
func base(u *unstructured.Unstructured, rec *record) (map[string]any, error) {
	if rec.Applied == nil {
		return rec.Spec, nil
	}
	live, _, _ := unstructured.NestedMap(u.Object, "spec")
	v, err := handback.RevertAny(live, rec.Spec, rec.Applied)
	if err != nil {
		return nil, err
	}
	spec, _ := v.(map[string]any)
	return spec, nil
}

// ours reports whether rec was written for the Rollout of r (a record
// without a Rollout, written by OpenKruise, is taken over).
func (r *Router) ours(rec *record) bool {
	return rec.Rollout == "" || rec.Rollout == r.t.Rollout
}

// read returns the object and its record (nil when no release changed
// it); nil object when it is gone.
func (r *Router) read(ctx context.Context) (*unstructured.Unstructured, *record, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.t.Namespace, Name: r.name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("reading %s: %w", r.what(), err)
	}
	raw, ok := u.GetAnnotations()[OriginalAnnotation]
	if !ok {
		return u, nil, nil
	}
	rec := &record{}
	if err := json.Unmarshal([]byte(raw), rec); err != nil {
		return nil, nil, fmt.Errorf("%s: annotation %s: %w", r.what(), OriginalAnnotation, err)
	}
	return u, rec, nil
}

// dataOf is the data of u as a script sees it.
func dataOf(u *unstructured.Unstructured) Data {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	annotations := u.GetAnnotations()
	delete(annotations, OriginalAnnotation)
	delete(annotations, handback.RecoveryAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	return Data{Spec: spec, Labels: u.GetLabels(), Annotations: annotations}
}

// EnsureRoutes implements traffic.Provider: it runs the kind's script on
// the object's data before the release and writes the spec it returns.
// Labels and annotations a script returns are not written.
func (r *Router) EnsureRoutes(ctx context.Context, d traffic.Desired) (bool, error) {
	u, rec, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	if u == nil {
		return false, fmt.Errorf("%s not found", r.what())
	}
	recorded := rec != nil
	if recorded && !r.ours(rec) {
		return false, fmt.Errorf("%s is being changed by Rollout %s: %w", r.what(), rec.Rollout, traffic.ErrConflict)
	}
	// The script runs on the object as it is without sluice's change, so
	// that what someone else changes mid-release is kept.
	data := dataOf(u)
	if recorded {
		if data.Spec, err = base(u, rec); err != nil {
			return false, fmt.Errorf("%s: annotation %s: %w", r.what(), OriginalAnnotation, err)
		}
		if rec.Applied == nil {
			// OpenKruise's record, or an earlier sluice's: its data is the
			// object before the release.
			data = rec.Data
		}
	}
	rec = &record{Data: data, Rollout: r.t.Rollout}
	script, err := Load(ctx, r.reader, r.opts.namespace(), r.gvk.GroupKind())
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.what(), err)
	}
	want, err := Evaluate(ctx, script, rec.Data, d, r.limits)
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.what(), err)
	}
	live, _, _ := unstructured.NestedMap(u.Object, "spec")
	same, err := sameJSON(live, want.Spec)
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.what(), err)
	}
	if recorded && same {
		return true, nil
	}
	rec.Applied = want.Spec
	b, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	// The patch below is guarded by the resourceVersion read, so the
	// generation it gives the object is known: one more when it changes
	// the spec. The recovery patch is for that generation.
	generation := u.GetGeneration()
	if !same {
		generation++
	}
	recovery, err := handback.RecoveryPatch(generation, rec.Spec, "/spec", OriginalAnnotation)
	if err != nil {
		return false, err
	}
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
		{"op": "add", "path": "/spec", "value": want.Spec},
	}
	if u.GetAnnotations() == nil {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{}})
	}
	ops = append(ops,
		map[string]any{"op": "add", "path": handback.PatchPath(OriginalAnnotation), "value": string(b)},
		map[string]any{"op": "add", "path": handback.PatchPath(handback.RecoveryAnnotation), "value": recovery})
	if err := r.patch(ctx, u, ops); err != nil {
		return false, fmt.Errorf("routing %s: %w", r.what(), err)
	}
	return false, nil
}

// Evaluate runs script on original for the step d and returns the data
// it returns.
func Evaluate(ctx context.Context, script Script, original Data, d traffic.Desired, limits Limits) (Data, error) {
	in, err := Input(original, d)
	if err != nil {
		return Data{}, err
	}
	out, err := Run(ctx, script.Name, script.Source, in, limits)
	if err != nil {
		return Data{}, err
	}
	data, err := ResultOf(out)
	if err != nil {
		return Data{}, &ScriptError{Script: script.Name, Message: err.Error()}
	}
	return data, nil
}

// Finalize implements traffic.Provider: if the object is still as read,
// it writes back its live spec with sluice's change reverted (the spec
// recorded before the release, with whatever someone else changed since;
// see handback.Revert) and removes the record. An object another Rollout
// changes is left alone.
func (r *Router) Finalize(ctx context.Context) (bool, error) {
	u, rec, err := r.read(ctx)
	if err != nil || u == nil || rec == nil || !r.ours(rec) {
		return err == nil, err
	}
	spec, err := base(u, rec)
	if err != nil {
		return false, fmt.Errorf("%s: annotation %s: %w", r.what(), OriginalAnnotation, err)
	}
	patch, err := handback.RestorePatch(spec, u.GetResourceVersion(), "/spec", handback.Present(u.GetAnnotations(), OriginalAnnotation, handback.RecoveryAnnotation)...)
	if err != nil {
		return false, err
	}
	if err := r.client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return false, fmt.Errorf("restoring %s: %w", r.what(), err)
	}
	return false, nil
}

// patch applies the JSON patch ops to u, as sluice.
func (r *Router) patch(ctx context.Context, u *unstructured.Unstructured, ops []map[string]any) error {
	b, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	return r.client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager))
}

// sameJSON reports whether a and b have the same JSON form (so an int64
// and a float64 of the same value are equal).
func sameJSON(a, b any) (bool, error) {
	ja, err := jsonForm(a)
	if err != nil {
		return false, err
	}
	jb, err := jsonForm(b)
	if err != nil {
		return false, err
	}
	return apiequality.Semantic.DeepEqual(ja, jb), nil
}
