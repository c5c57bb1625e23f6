package deployment

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

var _ workload.Hold = Hold

// Hold implements workload.Hold for Deployments; see holdDeployment.
func Hold(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
	o, u := &appsv1.Deployment{}, &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(old.Object, o); err != nil {
		return false, "", fmt.Errorf("decoding the stored Deployment: %w", err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(updated.Object, u); err != nil {
		return false, "", fmt.Errorf("decoding the Deployment update: %w", err)
	}
	changed, why := holdDeployment(o, u, rollout)
	if !changed {
		return false, why, nil
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(u)
	if err != nil {
		return false, "", err
	}
	updated.Object = obj
	return true, why, nil
}

// holdDeployment changes updated, an update of old by someone other than
// sluice, so that an active Rollout named rollout keeps control of it:
//   - a new release (pod template or rollout-id changed) pauses the
//     Deployment and marks it with rollouts.kruise.io/in-progressing;
//   - while a release holds it, the fields sluice controls keep their
//     values, and what the user wrote to them is kept in the restore patch
//     to take effect when the release ends.
//
// It reports whether it changed updated, and why.
func holdDeployment(old, updated *appsv1.Deployment, rollout string) (bool, string) {
	if updated.Spec.Replicas != nil && *updated.Spec.Replicas == 0 {
		return false, "no replicas"
	}
	if updated.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return false, "Recreate strategy cannot be released in batches"
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
			b, _ := json.Marshal(map[string]string{"rolloutName": rollout})
			setAnnotation(updated, rolloutsv1beta1.InProgressingAnnotation, string(b))
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
	for _, k := range []string{rolloutsv1beta1.InProgressingAnnotation, rolloutsv1beta1.ControlInfoAnnotation} {
		if v, ok := old.Annotations[k]; ok {
			setAnnotation(updated, k, v)
		}
	}
	if v, ok := old.Labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		if updated.Labels == nil {
			updated.Labels = map[string]string{}
		}
		updated.Labels[rolloutsv1beta1.StableRevisionLabel] = v
	}
	updated.Spec.Paused = old.Spec.Paused
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
