package partition

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ordered reports whether the partition of o counts ordinals: pods whose
// ordinal is at least the partition run the update revision, the others
// keep theirs (StatefulSet-like kinds, unless an Advanced StatefulSet
// updates unordered).
func (o object) ordered() bool {
	if !o.p.ordinals {
		return false
	}
	unordered, _, _ := unstructured.NestedBool(o.u.Object, "spec", "updateStrategy", "rollingUpdate", "unorderedUpdate")
	return !unordered
}

// ordinalTarget is the partition of an ordered workload o of n pods that
// puts desired pods on the update revision, counting the pods below it
// that already run it (a rollback in batches: the pods never updated are
// the lowest ordinals).
func (r *Releaser) ordinalTarget(ctx context.Context, o object, n, desired int32) (int32, error) {
	pods, err := r.ownedPods(ctx, o)
	if err != nil {
		return 0, err
	}
	update := o.revision(r.p.update)
	var onUpdate []int32
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || update == "" || p.Labels[r.p.revisionLabel] != update {
			continue
		}
		if ord, ok := ordinalOf(o.u.GetName(), p.Name); ok {
			onUpdate = append(onUpdate, ord)
		}
	}
	return ordinalPartition(n, desired, onUpdate), nil
}

// ordinalPartition is the highest partition of a workload of n pods that
// leaves at least desired pods on the update revision: those at or above
// it, and those below it that already run it (their ordinals in
// onUpdate).
func ordinalPartition(n, desired int32, onUpdate []int32) int32 {
	for p := n; p > 0; p-- {
		updated := n - p
		for _, ord := range onUpdate {
			if ord < p {
				updated++
			}
		}
		if updated >= desired {
			return p
		}
	}
	return 0
}

// ordinalOf reads the ordinal of pod, named <workload>-<ordinal>.
func ordinalOf(workload, pod string) (int32, bool) {
	rest, ok := strings.CutPrefix(pod, workload+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// ownedPods lists the pods of o that o controls.
func (r *Releaser) ownedPods(ctx context.Context, o object) ([]corev1.Pod, error) {
	sel, err := o.selector()
	if err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("spec.selector of %s: %w", o.name(), err)
	}
	list := &corev1.PodList{}
	if err := r.reader.List(ctx, list, client.InNamespace(r.key.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing pods of %s: %w", o.name(), err)
	}
	owned := list.Items[:0]
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == o.u.GetUID() {
			owned = append(owned, p)
		}
	}
	return owned, nil
}
