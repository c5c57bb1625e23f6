package batchrelease

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch

// labelPods labels the pods of the update revision with the release's
// rollout ID and their batch (rollouts.kruise.io/rollout-id and
// rollouts.kruise.io/rollout-batch-id), so users can select a batch:
// kubectl get pods -l rollouts.kruise.io/rollout-id=X,rollouts.kruise.io/rollout-batch-id=1.
// Batches are filled by the plan from the oldest pod on, so labels follow
// the plan also after scaling or a restart.
func (r *Reconciler) labelPods(ctx context.Context, s *scope, ws *workload.Status) error {
	plan := s.br.Spec.ReleasePlan
	if plan.RolloutID == "" || ws.PodSelector == nil || ws.RevisionLabel == "" || ws.PodTemplateHash == "" {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ws.PodSelector)
	if err != nil {
		return fmt.Errorf("pod selector: %w", err)
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(s.br.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	var updated []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Labels[ws.RevisionLabel] == ws.PodTemplateHash {
			updated = append(updated, p)
		}
	}
	ids, err := batchIDs(plan.Batches, ws.Replicas, noNeedUpdate(&s.br.Status, ws.Replicas), updated)
	if err != nil {
		return err
	}
	for i, p := range updated {
		if ids[i] == 0 {
			continue // ran this revision before the release: not part of it
		}
		id := strconv.Itoa(ids[i])
		if p.Labels[rolloutsv1beta1.RolloutIDLabel] == plan.RolloutID && p.Labels[rolloutsv1beta1.RolloutBatchIDLabel] == id {
			continue
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{
			rolloutsv1beta1.RolloutIDLabel: plan.RolloutID, rolloutsv1beta1.RolloutBatchIDLabel: id,
		}}})
		err := r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("labelling pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// batchIDs assigns each pod (sorted here oldest first, by creation time
// then name) the 1-based batch that released it under the plan: the first
// noNeed pods ran the revision before the release (batch 0, not labelled);
// of the others, pod i belongs to the first batch whose cumulative size
// exceeds i, and pods beyond the plan belong to the last batch.
func batchIDs(batches []rolloutsv1beta1.ReleaseBatch, replicas, noNeed int32, pods []*corev1.Pod) ([]int, error) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return pods[i].Name < pods[j].Name
	})
	sizes := make([]int32, len(batches))
	for k := range batches {
		n, err := batch.DesiredUpdated(&batches[k].CanaryReplicas, replicas-noNeed)
		if err != nil {
			return nil, fmt.Errorf("spec.releasePlan.batches[%d].canaryReplicas: %w", k, err)
		}
		sizes[k] = n
	}
	ids := make([]int, len(pods))
	for i := range pods {
		j := int32(i) - noNeed //nolint:gosec // pod counts fit
		if j < 0 {
			continue
		}
		ids[i] = len(batches)
		for k, size := range sizes {
			if j < size {
				ids[i] = k + 1
				break
			}
		}
	}
	return ids, nil
}
