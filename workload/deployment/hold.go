package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

var _ workload.Hold = Hold

// Hold implements workload.Hold for Deployments; see holdDeployment.
func Hold(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
	return workload.TypedHold("Deployment", holdDeployment)(old, updated, rollout)
}

// holdDeployment changes updated, an update of old by someone other than
// sluice, so that an active Rollout named rollout keeps control of it:
//   - a new release (pod template or rollout-id changed) pauses the
//     Deployment and marks it with rollouts.kruise.io/in-progressing, even
//     with the Recreate strategy, which sluice cannot release in batches:
//     the Rollout then reports spec.strategy.type and keeps the update held
//     until the user sets RollingUpdate (or disables the Rollout), instead
//     of letting Kubernetes recreate every pod at once;
//   - while a release holds it, the fields sluice controls keep their
//     values, and what the user wrote to them is kept in the restore patch
//     to take effect when the release ends. Before the release has claimed
//     the Deployment (there is no restore patch yet) sluice controls only
//     spec.paused: the user's strategy, minReadySeconds and
//     progressDeadlineSeconds go through as written.
//
// It reports whether it changed updated, and why.
func holdDeployment(old, updated *appsv1.Deployment, rollout string) (bool, string) {
	if updated.Spec.Replicas != nil && *updated.Spec.Replicas == 0 {
		return false, "no replicas"
	}
	newRelease := !apiequality.Semantic.DeepEqual(old.Spec.Template, updated.Spec.Template) ||
		workload.RolloutID(old.Labels, old.Annotations) != workload.RolloutID(updated.Labels, updated.Annotations)
	_, inProgress := old.Annotations[rolloutsv1beta1.InProgressingAnnotation]
	if !newRelease && !inProgress {
		return false, "no new release"
	}
	if inProgress {
		keepHeldFields(old, updated)
	}
	if newRelease {
		updated.Spec.Paused = true
		if !inProgress {
			setAnnotation(updated, rolloutsv1beta1.InProgressingAnnotation, workload.InProgressing(rollout))
		}
		return true, "new release held for rollout " + rollout
	}
	return true, "release in progress: sluice's fields kept"
}

// keepHeldFields restores, on updated, the fields and marks a release holds.
func keepHeldFields(old, updated *appsv1.Deployment) {
	if raw, ok := old.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; ok {
		if merged, err := MergeUserChanges(raw, old, updated); err == nil {
			raw = merged
		}
		setAnnotation(updated, rolloutsv1beta1.DeploymentOriginalAnnotation, raw)
	}
	workload.KeepMarks(old, updated, ownership.Annotation)
	updated.Spec.Paused = old.Spec.Paused
	if _, claimed := old.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !claimed {
		return
	}
	updated.Spec.MinReadySeconds = old.Spec.MinReadySeconds
	updated.Spec.ProgressDeadlineSeconds = old.Spec.ProgressDeadlineSeconds
	updated.Spec.Strategy = *old.Spec.Strategy.DeepCopy()
}

func setAnnotation(d *appsv1.Deployment, k, v string) {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[k] = v
}
