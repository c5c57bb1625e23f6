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
	ids, err := batchIDs(plan.Batches, ws.Replicas, noNeedUpdate(&s.br.Status, ws.Replicas), plan.RolloutID, updated)
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
// then name) the 1-based batch that released it under the plan. A pod
// already labelled by this release (rolloutID) keeps its batch while the
// batch holds no more pods than the plan gives it: creation times have a
// one-second resolution, so pods of a later batch often sort before those of
// an earlier one, and a pod must not change batch mid-release. The other
// pods, oldest first: the first noNeed ran the revision before the release
// (batch 0, not labelled); the rest fill the earliest batch with room, and
// pods beyond the plan belong to the last batch.
func batchIDs(batches []rolloutsv1beta1.ReleaseBatch, replicas, noNeed int32, rolloutID string, pods []*corev1.Pod) ([]int, error) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return pods[i].Name < pods[j].Name
	})
	// room[k] is how many more pods batch k+1 takes: its planned size
	// less the batches before it.
	room := make([]int32, len(batches))
	var before int32
	for k := range batches {
		n, err := batch.DesiredUpdated(&batches[k].CanaryReplicas, replicas-noNeed)
		if err != nil {
			return nil, fmt.Errorf("spec.releasePlan.batches[%d].canaryReplicas: %w", k, err)
		}
		room[k] = max(0, n-before)
		before = max(before, n)
	}
	ids := make([]int, len(pods))
	var unplaced []int
	for i, p := range pods {
		k := labelledBatch(p, rolloutID, len(batches))
		if k > 0 && room[k-1] > 0 {
			room[k-1]--
			ids[i] = k
			continue
		}
		unplaced = append(unplaced, i)
	}
	for n, i := range unplaced {
		if int32(n) < noNeed { //nolint:gosec // pod counts fit
			continue
		}
		ids[i] = len(batches)
		for k := range room {
			if room[k] > 0 {
				room[k]--
				ids[i] = k + 1
				break
			}
		}
	}
	return ids, nil
}

// labelledBatch is the 1-based batch a pod was labelled with by the release
// rolloutID, or 0 when it carries no valid label of that release.
func labelledBatch(p *corev1.Pod, rolloutID string, batches int) int {
	if rolloutID == "" || p.Labels[rolloutsv1beta1.RolloutIDLabel] != rolloutID {
		return 0
	}
	k, err := strconv.Atoi(p.Labels[rolloutsv1beta1.RolloutBatchIDLabel])
	if err != nil || k < 1 || k > batches {
		return 0
	}
	return k
}
