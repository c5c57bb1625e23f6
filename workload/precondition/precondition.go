// Package precondition makes the workload adapters' writes conditional on
// what they read: a JSON merge patch that carries metadata.resourceVersion
// is refused with a conflict when the object changed since it was read
// (the API server's optimistic concurrency), so a decision made on one
// read is never written onto another state of the object.
package precondition

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// MergePatch returns patch (a map, a struct or raw JSON of an object) as a
// JSON merge patch that also sets metadata.resourceVersion, so that it
// applies only to the object at that version.
func MergePatch(patch any, resourceVersion string) ([]byte, error) {
	if resourceVersion == "" {
		return nil, fmt.Errorf("a guarded write needs the resourceVersion it was planned on")
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("a merge patch must be a JSON object: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = resourceVersion
	m["metadata"] = meta
	return json.Marshal(m)
}

// Patch writes patch (see MergePatch) to obj, guarded by the
// resourceVersion obj was read at, with sluice's field manager. A failed
// write's error names what ("deployment shop/web"); a conflict means obj
// changed since it was read, and the caller plans again from a fresh read.
func Patch(ctx context.Context, c client.Client, obj client.Object, patch any, what string) error {
	b, err := MergePatch(patch, obj.GetResourceVersion())
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return fmt.Errorf("patching %s: %w", what, err)
	}
	return nil
}
