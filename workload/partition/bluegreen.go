package partition

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/workload"
)

// A blue-green release of a CloneSet runs the new revision beside every
// old pod, as OpenKruise Rollouts does: the partition is cleared,
// maxUnavailable is 0 and minReadySeconds so high that no pod ever counts
// as available, so the CloneSet controller never removes an old pod; each
// step sets maxSurge to the step's new pods, which the controller adds
// beside the old ones. Between steps nothing needs to change: maxSurge
// bounds the new pods. The release keeps the user's partition, maxSurge,
// maxUnavailable and minReadySeconds in the restore patch; applying it
// (sluice at the end of the release, or a user with one kubectl command)
// gives them back, the pods become available again and the CloneSet
// finishes the update by itself, with its own settings. On a rollback the
// same hand-back makes the new pods old-revision pods above replicas,
// which the controller removes at once.

// heldMinReadySeconds is the minReadySeconds of a CloneSet held for a
// blue-green release: no pod is ready that long, so none counts as
// available (OpenKruise Rollouts uses the same value).
const heldMinReadySeconds = math.MaxInt32 - 1

// inPlaceOnly is the CloneSet update type that cannot create pods above
// replicas (maxSurge is not allowed with it).
const inPlaceOnly = "InPlaceOnly"

// NewBlueGreen returns the Releaser that releases the workload key (of
// kind gvk, whose profile is kind: a CloneSet's) blue-green: each step adds
// new pods beside all the old ones, which go only when the release ends.
func NewBlueGreen(c client.Client, reader client.Reader, kind Profile, gvk schema.GroupVersionKind, key types.NamespacedName) (workload.Releaser, error) {
	p := kind.p
	if p.maxSurge == nil {
		return nil, fmt.Errorf("blue-green release of %s %s: %w", gvk.Kind, key, workload.ErrUnsupported)
	}
	return &Releaser{client: c, reader: reader, gvk: gvk, key: key, p: p, blueGreen: true}, nil
}

// blueGreenPaths are the fields a blue-green release holds besides the
// partition.
func (p profile) blueGreenPaths() [][]string {
	return [][]string{p.maxSurge, p.maxUnavailable, p.minReadySeconds}
}

// blueGreenGate is what a blue-green release writes on a CloneSet, besides
// maxUnavailable 0 and the inflated minReadySeconds.
type blueGreenGate struct {
	// Hold keeps the partition at the hold value (no pod changes at all);
	// otherwise the partition is cleared.
	Hold bool
	// MaxSurge is how many new pods the CloneSet may run beside the old
	// ones (at least 1: a CloneSet may not have both maxSurge and
	// maxUnavailable at 0).
	MaxSurge int64
}

// planBlueGreen is the gate for a step that wants desired pods on the new
// revision, of which updated already run: nothing to release holds; else
// the partition is cleared and maxSurge is the step's pods.
func planBlueGreen(desired, updated int32) blueGreenGate {
	if desired <= 0 {
		return blueGreenGate{Hold: true, MaxSurge: int64(max(updated, 1))}
	}
	return blueGreenGate{MaxSurge: int64(desired)}
}

// blueGreenClaimed reports whether a restore patch was extended by a
// blue-green release: it then also gives back minReadySeconds.
func blueGreenClaimed(patch map[string]any) bool {
	spec, _ := patch["spec"].(map[string]any)
	_, ok := spec["minReadySeconds"]
	return ok
}

// claimBlueGreen extends the restore patch raw of the workload obj with
// the values of the fields a blue-green release holds, as they are on obj
// (the user's: the hold changed only the partition). It reports false
// when raw already has them.
func claimBlueGreen(p profile, raw string, obj map[string]any) (string, bool, error) {
	patch := map[string]any{}
	if err := json.Unmarshal([]byte(raw), &patch); err != nil {
		return "", false, fmt.Errorf("annotation %s: %w", restoreAnnotation, err)
	}
	if blueGreenClaimed(patch) {
		return raw, false, nil
	}
	v, ok := restoredValue(patch, p.partition)
	claimed, err := encodeRestore(p, patch, withValue(obj, p.partition, v, ok), true)
	return claimed, err == nil, err
}

// blueGreenSpec is the merge patch that puts the workload obj in gate g:
// only the fields not yet at their value.
func blueGreenSpec(p profile, obj map[string]any, g blueGreenGate) map[string]any {
	patch := map[string]any{}
	raw, found, _ := unstructured.NestedFieldNoCopy(obj, p.partition...)
	switch {
	case g.Hold && (!found || fmt.Sprint(raw) != fmt.Sprint(p.hold)):
		setUnlessRemoved(patch, p.partition, p.hold)
	case !g.Hold && found && raw != nil:
		setUnlessRemoved(patch, p.partition, nil)
	}
	for _, f := range []struct {
		path []string
		want int64
	}{{p.maxSurge, g.MaxSurge}, {p.maxUnavailable, 0}, {p.minReadySeconds, heldMinReadySeconds}} {
		if v, ok := nestedNumber(obj, f.path); !ok || v != f.want {
			setUnlessRemoved(patch, f.path, f.want)
		}
	}
	return patch
}

// nestedNumber reads a field that holds a plain number (not a
// percentage).
func nestedNumber(obj map[string]any, path []string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return 0, false
	}
	if _, isString := v.(string); isString {
		return 0, false
	}
	return nestedInt(map[string]any{"v": v}, "v")
}

// mergeInto merges the merge patch src into dst.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sm, srcMap := v.(map[string]any)
		dm, dstMap := dst[k].(map[string]any)
		if srcMap && dstMap {
			mergeInto(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// upgradeBlueGreen is UpgradeBatch for a blue-green release: it sets
// maxSurge to the step's pods (and keeps the rest of the gate); the
// CloneSet controller adds them beside the old pods.
func (r *Releaser) upgradeBlueGreen(ctx context.Context, o object, desired int32) (bool, error) {
	raw, _ := restorePatchOf(o.u)
	claimed, changed, err := claimBlueGreen(r.p, raw, o.u.Object)
	if err != nil {
		return false, err
	}
	updated, _ := o.statusInt(r.p.updated)
	patch := blueGreenSpec(r.p, o.u.Object, planBlueGreen(desired, updated))
	if changed {
		// Held again after a hand-back without a new Claim: the fields
		// are still the user's (sluice writes them only together with
		// the restore values), so record them now.
		patch["metadata"] = map[string]any{"annotations": map[string]any{restoreAnnotation: claimed}}
	}
	if len(patch) == 0 {
		return o.fresh(), nil
	}
	return false, r.patch(ctx, o, patch)
}

// unsupportedBlueGreen says why o cannot be released blue-green, or "".
func unsupportedBlueGreen(o object) string {
	if o.strategyType() == inPlaceOnly {
		return fmt.Sprintf("spec.updateStrategy.type of %s is %s, which cannot run new pods beside the old ones (maxSurge); "+
			"a blue-green release needs ReCreate or InPlaceIfPossible", o.name(), inPlaceOnly)
	}
	return ""
}

// blueGreenStatus adjusts the status of a workload that a blue-green
// release claimed: its pods are settled once none is missing (the new ones
// run above replicas), and a nil failureThreshold tolerates the user's
// maxUnavailable, kept in the restore patch.
func blueGreenStatus(s *workload.Status, o object) {
	if s.Unsupported == "" {
		s.Unsupported = unsupportedBlueGreen(o)
	}
	raw, ok := restorePatchOf(o.u)
	patch := map[string]any{}
	if !ok || json.Unmarshal([]byte(raw), &patch) != nil || !blueGreenClaimed(patch) {
		return
	}
	pods, _ := o.statusInt([]string{"status", "replicas"})
	s.Settled = o.fresh() && pods >= s.Replicas
	v, set := restoredValue(patch, o.p.maxUnavailable)
	user := object{p: o.p, u: &unstructured.Unstructured{Object: withValue(o.u.Object, o.p.maxUnavailable, v, set)}}
	s.MaxUnavailable = user.maxUnavailable(s.Replicas)
}
