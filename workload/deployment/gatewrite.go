package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
)

// patchGate writes a gate's spec fields (specPatch) to d with a JSON patch
// guarded by the generation read, not the resourceVersion. Kubernetes'
// Deployment controller writes the status of a Deployment whose pods move
// several times a second, and a resourceVersion guard failed on most gate
// writes (two or three conflicts per batch, each a refused write, a read
// from the API server and a reconcile 250 ms later). A gate rests on the
// spec read (replicas, strategy, template, the held timing) and on the
// ReplicaSets, never on the Deployment's status, apart from its collision
// count, which names the new ReplicaSet and is guarded too when set. A
// change of the spec by anyone changes the generation: the write is then
// refused and returned as a conflict, so that the caller plans again from
// a fresh read, as before.
func (r *Releaser) patchGate(ctx context.Context, d *appsv1.Deployment, spec map[string]any) error {
	b, err := gatePatch(d, spec)
	if err != nil {
		return err
	}
	generation := d.Generation
	err = r.client.Patch(ctx, d, client.RawPatch(types.JSONPatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager))
	if apierrors.IsInvalid(err) && r.specChanged(ctx, generation) {
		// A failed test (the API server answers 422 for it, as for an
		// invalid object): the spec changed since it was read.
		err = apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, r.key.Name, err)
	}
	if err != nil {
		return fmt.Errorf("patching deployment %s: %w", r.key, err)
	}
	return nil
}

// specChanged reports whether the Deployment, read from the API server,
// is no longer at generation (or is gone).
func (r *Releaser) specChanged(ctx context.Context, generation int64) bool {
	cur := &appsv1.Deployment{}
	err := r.reader.Get(ownwrites.FromAPIServer(ctx), r.key, cur)
	return err != nil || cur.Generation != generation
}

// gatePatch is the JSON patch of patchGate: tests of the generation (and
// the collision count, when set), then an add of each field of spec, a
// map of specPatch's keys.
func gatePatch(d *appsv1.Deployment, spec map[string]any) ([]byte, error) {
	guard := map[string]any{"op": "test", "path": "/metadata/generation", "value": d.Generation}
	if d.Generation == 0 {
		// No generation: not a copy an API server gave (which always
		// sets one); fall back to the resourceVersion.
		guard = map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": d.ResourceVersion}
	}
	ops := []map[string]any{guard}
	if d.Status.CollisionCount != nil {
		ops = append(ops, map[string]any{"op": "test", "path": "/status/collisionCount", "value": *d.Status.CollisionCount})
	}
	for _, k := range []string{"paused", "minReadySeconds", "progressDeadlineSeconds"} {
		if v, ok := spec[k]; ok {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/" + k, "value": v})
		}
	}
	if st, ok := spec["strategy"].(map[string]any); ok {
		ru, _ := st["rollingUpdate"].(map[string]any)
		if d.Spec.Strategy.RollingUpdate == nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/strategy/rollingUpdate", "value": ru})
		} else {
			for _, k := range []string{"maxSurge", "maxUnavailable"} {
				if v, ok := ru[k]; ok {
					ops = append(ops, map[string]any{"op": "add", "path": "/spec/strategy/rollingUpdate/" + k, "value": v})
				}
			}
		}
	}
	return json.Marshal(ops)
}
