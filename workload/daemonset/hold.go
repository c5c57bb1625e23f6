package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

var _ workload.Hold = Hold

// Hold implements workload.Hold for DaemonSets; see holdDaemonSet.
func Hold(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
	return workload.TypedHold("DaemonSet", holdDaemonSet)(old, updated, rollout)
}

// holdDaemonSet changes updated, an update of old by someone other than
// sluice, so that an active Rollout named rollout keeps control of it:
//   - a new release (pod template or rollout-id changed) switches the
//     update strategy to OnDelete, so the DaemonSet controller replaces
//     only the pods sluice deletes, records the strategy it had in the
//     restore patch, and marks the DaemonSet with
//     rollouts.kruise.io/in-progressing;
//   - while a release holds it, the update strategy and sluice's marks keep
//     their values, and a strategy the user wrote goes into the restore
//     patch, to take effect when the release ends.
//
// It reports whether it changed updated, and why.
func holdDaemonSet(old, updated *appsv1.DaemonSet, rollout string) (bool, string) {
	newRelease := !apiequality.Semantic.DeepEqual(old.Spec.Template, updated.Spec.Template) ||
		workload.RolloutID(old.Labels, old.Annotations) != workload.RolloutID(updated.Labels, updated.Annotations)
	_, inProgress := old.Annotations[rolloutsv1beta1.InProgressingAnnotation]
	if !newRelease && !inProgress {
		return false, "no new release"
	}
	wanted := *updated.Spec.UpdateStrategy.DeepCopy()
	if inProgress {
		keepHeldFields(old, updated)
	}
	if _, ok := updated.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok && newRelease {
		setAnnotation(updated, rolloutsv1beta1.DeploymentOriginalAnnotation, newRestorePatch(wanted).encode())
	}
	if !newRelease {
		return true, "release in progress: sluice's fields kept"
	}
	updated.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
	if !inProgress {
		setAnnotation(updated, rolloutsv1beta1.InProgressingAnnotation, workload.InProgressing(rollout))
	}
	return true, "new release held for rollout " + rollout
}

// keepHeldFields restores, on updated, the fields and marks a release holds,
// folding a strategy the user wrote into the restore patch.
func keepHeldFields(old, updated *appsv1.DaemonSet) {
	if raw, ok := old.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; ok {
		if merged, err := mergeUserChanges(raw, old, updated); err == nil {
			raw = merged
		}
		setAnnotation(updated, rolloutsv1beta1.DeploymentOriginalAnnotation, raw)
	}
	workload.KeepMarks(old, updated, ownership.Annotation)
	updated.Spec.UpdateStrategy = *old.Spec.UpdateStrategy.DeepCopy()
}

func setAnnotation(ds *appsv1.DaemonSet, k, v string) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[k] = v
}
