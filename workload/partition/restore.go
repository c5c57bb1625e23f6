package partition

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

// restoreAnnotation holds, while a release holds the workload, the JSON
// merge patch that hands it back: its own partition, and none of sluice's
// annotations and labels. `kubectl patch --type merge -p "$(kubectl get
// ... -o jsonpath='{.metadata.annotations.sluice\.dev/restore-patch}')"`
// applies it without sluice.
const restoreAnnotation = rolloutsv1beta1.DeploymentOriginalAnnotation

// newRestorePatch returns the restore patch that gives the workload back
// the partition it has in obj, and removes sluice's marks and the record of
// the held fields' owners.
func newRestorePatch(p profile, obj map[string]any) (string, error) {
	patch := partitionFragment(p, obj)
	patch["metadata"] = workload.NewRestoreMarks(ownership.Annotation)
	b, err := json.Marshal(patch)
	return string(b), err
}

// partitionFragment is the part of a merge patch that sets the partition to
// its value in obj.
func partitionFragment(p profile, obj map[string]any) map[string]any {
	v, found, err := unstructured.NestedFieldNoCopy(obj, p.partition...)
	return fragment(p, obj, v, found && err == nil && v != nil)
}

// fragment is the part of a merge patch that sets the partition of an
// object shaped like obj to leaf, or, when it has none, removes it: null at
// the highest level of obj that holds nothing but the partition (so that
// no empty object sluice created is left behind, and nothing else is
// removed).
func fragment(p profile, obj map[string]any, leaf any, hasLeaf bool) map[string]any {
	root := map[string]any{}
	cur, at := root, obj
	last := len(p.partition) - 1
	for i, key := range p.partition {
		if hasLeaf {
			if i == last {
				cur[key] = leaf
				return root
			}
			m := map[string]any{}
			cur[key], cur = m, m
			continue
		}
		child := at[key]
		if i == last || (i > 0 && onlyPath(child, p.partition[i+1:])) {
			cur[key] = nil
			return root
		}
		m := map[string]any{}
		cur[key], cur = m, m
		at, _ = child.(map[string]any)
	}
	return root
}

// onlyPath reports whether node holds nothing but (at most) the field at
// path.
func onlyPath(node any, path []string) bool {
	m, ok := node.(map[string]any)
	if !ok {
		return node == nil
	}
	for k := range m {
		if k != path[0] {
			return false
		}
	}
	if len(path) == 1 {
		return true
	}
	return onlyPath(m[path[0]], path[1:])
}

// restoredValue reads the value a restore patch sets at path; ok is false
// when it removes it (or a level above it).
func restoredValue(patch map[string]any, path []string) (any, bool) {
	at := patch
	for i, key := range path {
		v := at[key]
		if i == len(path)-1 {
			return v, v != nil
		}
		next, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		at = next
	}
	return nil, false
}

// heldPaths are the fields the restore patch patch gives back: the
// partition, and the fields a blue-green release holds once it claimed the
// workload.
func heldPaths(p profile, patch map[string]any) [][]string {
	paths := [][]string{p.partition}
	if blueGreenClaimed(patch) {
		paths = append(paths, p.blueGreenPaths()...)
	}
	return paths
}

// withUserChanges rewrites the restore patch raw for updated, a user's
// update of a held workload whose stored version is old: a held field the
// user changed is what the release restores, and the patch follows the
// shape of updated, so it never removes what the user added beside the
// held fields.
func withUserChanges(p profile, raw string, old, updated map[string]any) (string, error) {
	patch := map[string]any{}
	if err := json.Unmarshal([]byte(raw), &patch); err != nil {
		return "", fmt.Errorf("annotation %s: %w", restoreAnnotation, err)
	}
	view := updated
	for _, path := range heldPaths(p, patch) {
		v, ok := restoredValue(patch, path)
		ov, ofound, _ := unstructured.NestedFieldNoCopy(old, path...)
		uv, ufound, _ := unstructured.NestedFieldNoCopy(updated, path...)
		if ofound != ufound || !equality.Semantic.DeepEqual(ov, uv) {
			v, ok = uv, ufound && uv != nil
		}
		view = withValue(view, path, v, ok)
	}
	return encodeRestore(p, patch, view, blueGreenClaimed(patch))
}

// encodeRestore replaces the spec part of the restore patch patch with the
// one that gives back view, the workload as its user wants it: its
// partition and, with blueGreen, the fields a blue-green release holds.
func encodeRestore(p profile, patch, view map[string]any, blueGreen bool) (string, error) {
	delete(patch, p.partition[0])
	for k, v := range partitionFragment(p, view) {
		patch[k] = v
	}
	if blueGreen {
		for _, path := range p.blueGreenPaths() {
			v, found, err := unstructured.NestedFieldNoCopy(view, path...)
			if err != nil || !found {
				v = nil
			}
			setUnlessRemoved(patch, path, v)
		}
	}
	b, err := json.Marshal(patch)
	return string(b), err
}

// withValue returns obj with the field at path set to v, or removed when
// not ok. obj is not modified: the maps along path are copied.
func withValue(obj map[string]any, path []string, v any, ok bool) map[string]any {
	out := make(map[string]any, len(obj)+1)
	for k, x := range obj {
		out[k] = x
	}
	if len(path) == 1 {
		if ok {
			out[path[0]] = v
		} else {
			delete(out, path[0])
		}
		return out
	}
	child, _ := obj[path[0]].(map[string]any)
	if child == nil && !ok {
		return out
	}
	out[path[0]] = withValue(child, path[1:], v, ok)
	return out
}

// setUnlessRemoved sets the field at path of the merge patch m to v,
// unless m already removes a level above it (which removes it too).
func setUnlessRemoved(m map[string]any, path []string, v any) {
	at := m
	for _, key := range path[:len(path)-1] {
		next, present := at[key]
		if present && next == nil {
			return
		}
		child, isMap := next.(map[string]any)
		if !isMap {
			child = map[string]any{}
			at[key] = child
		}
		at = child
	}
	at[path[len(path)-1]] = v
}

// restorePatchOf returns the restore patch of u, if it has one.
func restorePatchOf(u *unstructured.Unstructured) (string, bool) {
	raw, ok := u.GetAnnotations()[restoreAnnotation]
	return raw, ok
}
