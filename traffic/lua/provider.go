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
}

// New returns the Router of the object ref of the entry t.Ref. It reads
// through reader (the object and the ConfigMap of scripts) and writes
// through c; the object is read and written as unstructured, so any kind
// the cluster serves will do.
func New(c client.Client, reader client.Reader, t traffic.Target, ref rolloutsv1beta1.ObjectRef) (*Router, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("customNetworkRefs %s/%s: apiVersion: %w", ref.Kind, ref.Name, err)
	}
	if ref.Kind == "" || ref.Name == "" {
		return nil, fmt.Errorf("customNetworkRefs entry %q/%q needs a kind and a name", ref.Kind, ref.Name)
	}
	return &Router{client: c, reader: reader, t: t, gvk: gv.WithKind(ref.Kind), name: ref.Name, limits: DefaultLimits()}, nil
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
	if !recorded {
		rec = &record{Data: dataOf(u), Rollout: r.t.Rollout}
	} else if !r.ours(rec) {
		return false, fmt.Errorf("%s is being changed by Rollout %s: %w", r.what(), rec.Rollout, traffic.ErrConflict)
	}
	namespace := NamespaceFrom(ctx)
	script, err := Load(ctx, r.reader, namespace, r.gvk.GroupKind())
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
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
		{"op": "add", "path": "/spec", "value": want.Spec},
	}
	if !recorded {
		b, err := json.Marshal(rec)
		if err != nil {
			return false, err
		}
		if u.GetAnnotations() == nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{}})
		}
		ops = append(ops, map[string]any{"op": "add", "path": handback.PatchPath(OriginalAnnotation), "value": string(b)})
	}
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

// Finalize implements traffic.Provider: it writes back the spec recorded
// before the release and removes the record. An object another Rollout
// changes is left alone.
func (r *Router) Finalize(ctx context.Context) (bool, error) {
	u, rec, err := r.read(ctx)
	if err != nil || u == nil || rec == nil || !r.ours(rec) {
		return err == nil, err
	}
	original := rec.Data
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
	}
	if original.Spec == nil {
		ops = append(ops, map[string]any{"op": "remove", "path": "/spec"})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": "/spec", "value": original.Spec})
	}
	ops = append(ops, map[string]any{"op": "remove", "path": handback.PatchPath(OriginalAnnotation)})
	if err := r.patch(ctx, u, ops); err != nil {
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
