package rollout

import (
	"context"
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
)

// patchStatus writes the status if it changed, with a merge patch guarded
// by the resourceVersion read, so an approval written meanwhile by a user is
// never overwritten: the patch fails and the next reconcile sees it.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	if apiequality.Semantic.DeepEqual(s.base.Status, s.ro.Status) {
		return nil
	}
	obj := s.ro.DeepCopy()
	obj.ResourceVersion = s.base.ResourceVersion
	err := r.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(s.base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(rolloutsv1beta1.FieldManager))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}

// viewOf extracts what the step machine reads from a BatchRelease.
func viewOf(br *rolloutsv1beta1.BatchRelease) *canary.BatchReleaseView {
	return &canary.BatchReleaseView{
		Partition:          br.Spec.ReleasePlan.BatchPartition,
		Policy:             br.Spec.ReleasePlan.FinalizingPolicy,
		RolloutID:          br.Spec.ReleasePlan.RolloutID,
		Generation:         br.Generation,
		ObservedGeneration: br.Status.ObservedGeneration,
		Phase:              br.Status.Phase,
		CurrentBatch:       br.Status.CanaryStatus.CurrentBatch,
		BatchState:         br.Status.CanaryStatus.CurrentBatchState,
		StableRevision:     br.Status.StableRevision,
		UpdateRevision:     br.Status.UpdateRevision,
		Deleting:           !br.DeletionTimestamp.IsZero(),
	}
}

// statusApprover names the field manager that last wrote
// status.canaryStatus.currentStepState, unless it is sluice itself: that is
// who approved through the status subresource.
func statusApprover(ro *rolloutsv1beta1.Rollout) string {
	for _, mf := range ro.ManagedFields {
		if mf.Manager == rolloutsv1beta1.FieldManager || mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for _, sub := range []string{"f:canaryStatus", "f:blueGreenStatus"} {
			if _, ok := fields["f:status"][sub]["f:currentStepState"]; ok {
				return mf.Manager
			}
		}
	}
	return ""
}
