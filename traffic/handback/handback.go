// Package handback lets sluice borrow one field of a user's object for a
// release and give it back exactly: the stable Service's spec.selector, an
// HTTPRoute's spec.rules. Both are atomic for server-side apply (the API
// declares them so), so the smallest part sluice can own is the whole
// field.
//
// While a release runs, sluice applies the field with server-side apply
// under its own field manager, and keeps in an annotation of the object a
// Record: the original value, the value sluice wrote, and the field
// manager that owned the field. What someone else changes in the field
// while the release runs (a GitOps tool, a person) is kept: every later
// write of sluice, and the restore at the end, starts from the live value
// with only sluice's own change reverted (see Revert), never from the
// recorded original alone. The restore is written under the original
// owner's name (an update, not an apply) and only if the object is still
// as read, so ownership returns to whoever had it and sluice is left
// owning nothing of the object.
package handback

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Manager is the field manager that writes a value back when the field's
// original owner cannot be named: it was unknown, sluice itself, or an
// applier (writing under an applier's name as an update would keep a
// second, stale entry of theirs).
const Manager = "sluice-handback"

// Record is what a release borrowed of one field of an object.
type Record struct {
	// Rollout is the Rollout that borrowed the field.
	Rollout string `json:"rollout"`
	// Value is the field's original value, as JSON; null when it was unset.
	Value json.RawMessage `json:"value"`
	// Manager is the field manager that owned the field, if any.
	Manager string `json:"manager,omitempty"`
	// Operation is how Manager wrote it: Update or Apply.
	Operation string `json:"operation,omitempty"`
	// Applied is the value sluice last wrote, as JSON. A record without it
	// (written by an earlier version of sluice) restores Value as it is.
	Applied json.RawMessage `json:"applied,omitempty"`
}

// SetApplied records value as what sluice writes into the field.
func (r *Record) SetApplied(value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	r.Applied = b
	return nil
}

// Base is the field's value without sluice's change: live (the field as
// the object holds it now, any Go value) with what sluice wrote reverted
// to the original, and everything else someone changed since kept. It is
// what sluice builds its next value on, and what it restores. The result
// is in JSON form; nil when the field is to be unset.
func (r *Record) Base(live any) (any, error) {
	var original any
	if len(r.Value) > 0 {
		if err := json.Unmarshal(r.Value, &original); err != nil {
			return nil, fmt.Errorf("recorded value: %w", err)
		}
	}
	if len(r.Applied) == 0 {
		return original, nil
	}
	var applied any
	if err := json.Unmarshal(r.Applied, &applied); err != nil {
		return nil, fmt.Errorf("recorded applied value: %w", err)
	}
	return RevertAny(live, original, applied)
}

// Read returns the Record kept in annotation key, if any.
func Read(annotations map[string]string, key string) (*Record, error) {
	raw, ok := annotations[key]
	if !ok {
		return nil, nil
	}
	r := &Record{}
	if err := json.Unmarshal([]byte(raw), r); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", key, err)
	}
	return r, nil
}

// New records value as the original of the field at path (e.g. "spec",
// "selector"), owned as managedFields say, for rollout.
func New(rollout string, value any, managedFields []metav1.ManagedFieldsEntry, path ...string) (*Record, error) {
	b, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	r := &Record{Rollout: rollout, Value: b}
	r.Manager, r.Operation = OwnerOf(managedFields, path...)
	return r, nil
}

// Encode returns the annotation value of r.
func (r *Record) Encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Owner is the field manager under which the original value is written
// back: the original owner when it wrote with an update, else Manager.
func (r *Record) Owner() string {
	if r.Operation == string(metav1.ManagedFieldsOperationUpdate) && r.Manager != "" && r.Manager != rolloutsv1beta1.FieldManager {
		return r.Manager
	}
	return Manager
}

// OwnerOf names the field manager that owns the field at path in
// managedFields, and how it wrote it; empty when none does. When several
// share it, the first that is not sluice is named.
func OwnerOf(managedFields []metav1.ManagedFieldsEntry, path ...string) (manager, operation string) {
	for _, mf := range managedFields {
		if mf.Subresource != "" || mf.FieldsV1 == nil || mf.Manager == rolloutsv1beta1.FieldManager {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		if owns(fields, path) {
			return mf.Manager, string(mf.Operation)
		}
	}
	return "", ""
}

func owns(fields map[string]any, path []string) bool {
	for i, p := range path {
		v, ok := fields["f:"+p]
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		if fields, ok = v.(map[string]any); !ok {
			return false
		}
	}
	return false
}

// PatchPath escapes an annotation key for a JSON patch path.
func PatchPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// RestorePatch is a JSON patch that, if the object is still at
// resourceVersion (so that nothing written since the read is lost),
// writes value (the field without sluice's change, see Record.Base; nil
// unsets it) at fieldPath (a JSON patch path such as /spec/selector) and
// removes the annotations keys (the record, and RecoveryAnnotation when
// the object has it). It changes nothing else.
func RestorePatch(value any, resourceVersion, fieldPath string, keys ...string) ([]byte, error) {
	return json.Marshal(restoreOps(map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": resourceVersion}, value, fieldPath, keys))
}

// RecoveryAnnotation on an object a release changed (an HTTPRoute's rules,
// a Lua-routed object's spec) holds a JSON patch that gives the field back
// without sluice, for the recovery by hand (docs/recovery.md):
//
//	kubectl patch KIND NAME --type json \
//	  -p "$(kubectl get KIND NAME -o jsonpath='{.metadata.annotations.sluice\.dev/restore-json-patch}')"
//
// sluice rewrites it with each change it makes, from the field as it is
// then without sluice's change (so an edit made while sluice ran is kept),
// and removes it when it gives the field back itself.
const RecoveryAnnotation = "sluice.dev/restore-json-patch"

// RecoveryPatch is the JSON patch kept in RecoveryAnnotation: if the
// object's spec is still as sluice's write left it (its generation is
// generation, the one that write gives it), it writes value at fieldPath
// (nil unsets it) and removes the annotations keys and RecoveryAnnotation.
// An object whose spec someone changed after sluice's last write (while
// sluice was gone) refuses it, rather than losing that change: restore it
// with kubectl sluice recover, which merges, or from Git.
func RecoveryPatch(generation int64, value any, fieldPath string, keys ...string) (string, error) {
	ops := restoreOps(map[string]any{"op": "test", "path": "/metadata/generation", "value": generation}, value, fieldPath, append(keys, RecoveryAnnotation))
	b, err := json.Marshal(ops)
	return string(b), err
}

// restoreOps are guard, the write of value at fieldPath and the removal of
// the annotations keys.
func restoreOps(guard map[string]any, value any, fieldPath string, keys []string) []map[string]any {
	ops := []map[string]any{guard}
	if isNull(value) {
		ops = append(ops, map[string]any{"op": "remove", "path": fieldPath})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": fieldPath, "value": value})
	}
	for _, k := range keys {
		ops = append(ops, map[string]any{"op": "remove", "path": PatchPath(k)})
	}
	return ops
}

// Present returns those of keys that annotations has.
func Present(annotations map[string]string, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if _, ok := annotations[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// isNull reports whether v is unset: nil, or a nil map or slice, or the
// JSON null.
func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(x) == 0 || string(x) == "null"
	case map[string]any:
		return x == nil
	case []any:
		return x == nil
	}
	return false
}
