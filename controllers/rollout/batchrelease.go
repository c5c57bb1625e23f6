package rollout

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/release/progress"
)

// ensureBatchRelease creates the Rollout's BatchRelease, or patches its plan,
// so that it releases up to partition (nil: everything, then hands back),
// or, with holdStable, holds every pod on the stable revision.
func (r *Reconciler) ensureBatchRelease(ctx context.Context, s *scope, partition *int32, policy rolloutsv1beta1.FinalizingPolicyType, holdStable bool) error {
	plan := planOf(s.ro, partition, policy)
	plan.HoldStable = holdStable
	thresholdDefault, optIn := s.ro.Annotations[rolloutsv1beta1.FailureThresholdDefaultAnnotation]
	if s.br == nil {
		br := &rolloutsv1beta1.BatchRelease{
			ObjectMeta: metav1.ObjectMeta{
				Name:      s.ro.Name,
				Namespace: s.ro.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s.ro,
					rolloutsv1beta1.GroupVersion.WithKind("Rollout"))},
			},
			Spec: rolloutsv1beta1.BatchReleaseSpec{WorkloadRef: s.ro.Spec.WorkloadRef, ReleasePlan: plan},
		}
		if optIn {
			br.Annotations = map[string]string{rolloutsv1beta1.FailureThresholdDefaultAnnotation: thresholdDefault}
		}
		ctrl.LoggerFrom(ctx).Info("Creating BatchRelease", "partition", partition)
		if err := r.Client.Create(ctx, br, client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
			return fmt.Errorf("creating batchrelease: %w", err)
		}
		return nil
	}
	// A merge patch that names every plan field, so batchPartition: null
	// is sent when everything is to be released; the failureThreshold
	// opt-in follows the Rollout's annotation.
	var annotation any
	if optIn {
		annotation = thresholdDefault
	}
	b, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{rolloutsv1beta1.FailureThresholdDefaultAnnotation: annotation}},
		"spec": map[string]any{"releasePlan": map[string]any{
			"batches":                  plan.Batches,
			"batchPartition":           plan.BatchPartition,
			"rolloutID":                plan.RolloutID,
			"failureThreshold":         plan.FailureThreshold,
			"finalizingPolicy":         plan.FinalizingPolicy,
			"rollingStyle":             plan.RollingStyle,
			"patchPodTemplateMetadata": plan.PatchPodTemplateMetadata,
			"holdStable":               plan.HoldStable,
		}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s.br, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return fmt.Errorf("updating batchrelease: %w", err)
	}
	return nil
}

// planOf turns the Rollout's steps into a release plan.
func planOf(ro *rolloutsv1beta1.Rollout, partition *int32, policy rolloutsv1beta1.FinalizingPolicyType) rolloutsv1beta1.ReleasePlan {
	plan := rolloutsv1beta1.ReleasePlan{
		BatchPartition:   partition,
		FinalizingPolicy: policy,
		RollingStyle:     coverage.Style(ro),
	}
	plan.FailureThreshold = ro.Spec.Strategy.GetFailureThreshold()
	if c := ro.Spec.Strategy.Canary; c != nil {
		plan.PatchPodTemplateMetadata = c.PatchPodTemplateMetadata
	}
	for _, st := range ro.Spec.Strategy.Steps() {
		replicas := intstr.FromString("100%")
		if st.Replicas != nil {
			replicas = *st.Replicas
		}
		plan.Batches = append(plan.Batches, rolloutsv1beta1.ReleaseBatch{CanaryReplicas: replicas})
	}
	if len(plan.Batches) == 0 {
		plan.Batches = []rolloutsv1beta1.ReleaseBatch{{CanaryReplicas: intstr.FromString("100%")}}
	}
	if p, ok := progress.Of(ro); ok {
		plan.RolloutID = p.Common.ObservedRolloutID
	}
	return plan
}
