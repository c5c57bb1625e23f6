package deployment

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

// RestorePatch is the JSON merge patch kept in the sluice.dev/restore-patch
// annotation while a release holds a Deployment, in place or with a canary
// Deployment (workload/canarydeployment). Applied as it is, by sluice or by
// hand with kubectl, it restores every field sluice changed and drops
// sluice's annotations and labels. The webhook folds a user's changes of
// the held fields into it (MergeUserChanges) for both styles.
type RestorePatch struct {
	// Metadata removes sluice's marks.
	Metadata workload.RestoreMarks `json:"metadata"`
	// Spec gives back the fields a release holds.
	Spec restoreSpec `json:"spec"`
}

type restoreSpec struct {
	Paused                  bool            `json:"paused"`
	MinReadySeconds         int32           `json:"minReadySeconds"`
	ProgressDeadlineSeconds *int32          `json:"progressDeadlineSeconds"`
	Strategy                restoreStrategy `json:"strategy"`
}

type restoreStrategy struct {
	RollingUpdate restoreRollingUpdate `json:"rollingUpdate"`
}

type restoreRollingUpdate struct {
	MaxSurge       *intstr.IntOrString `json:"maxSurge"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
}

// newRestorePatch captures the fields of d that an in-place release
// changes, and removes its ownership record too.
func newRestorePatch(d *appsv1.Deployment) RestorePatch {
	return NewRestorePatch(d, ownership.Annotation)
}

// NewRestorePatch captures the fields of d that a release may change (it
// gives back spec.paused false, d's timing and rolling update), and removes
// sluice's marks and the annotations also names.
func NewRestorePatch(d *appsv1.Deployment, also ...string) RestorePatch {
	p := RestorePatch{
		Metadata: workload.NewRestoreMarks(also...),
		Spec: restoreSpec{
			MinReadySeconds:         d.Spec.MinReadySeconds,
			ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds,
		},
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		p.Spec.Strategy.RollingUpdate = restoreRollingUpdate{MaxSurge: ru.MaxSurge, MaxUnavailable: ru.MaxUnavailable}
	}
	return p
}

// readRestorePatch parses the restore annotation of d; ok is false when d
// has none.
func readRestorePatch(d *appsv1.Deployment) (p RestorePatch, ok bool, err error) {
	raw, found := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if !found {
		return p, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, false, fmt.Errorf("annotation %s of Deployment %s/%s: %w",
			rolloutsv1beta1.DeploymentOriginalAnnotation, d.Namespace, d.Name, err)
	}
	return p, true, nil
}

// MergeUserChanges folds into the restore patch the values a user wrote to
// the fields sluice holds during a release, so that they take effect when
// the release ends instead of being lost. The webhook calls it for updates
// of held Deployments.
func MergeUserChanges(raw string, old, updated *appsv1.Deployment) (string, error) {
	var p RestorePatch
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "", fmt.Errorf("annotation %s: %w", rolloutsv1beta1.DeploymentOriginalAnnotation, err)
	}
	if updated.Spec.MinReadySeconds != old.Spec.MinReadySeconds {
		p.Spec.MinReadySeconds = updated.Spec.MinReadySeconds
	}
	if !equalInt32Ptr(updated.Spec.ProgressDeadlineSeconds, old.Spec.ProgressDeadlineSeconds) {
		p.Spec.ProgressDeadlineSeconds = updated.Spec.ProgressDeadlineSeconds
	}
	oru, nru := old.Spec.Strategy.RollingUpdate, updated.Spec.Strategy.RollingUpdate
	if nru != nil && oru != nil {
		if !equalIntOrString(nru.MaxSurge, oru.MaxSurge) {
			p.Spec.Strategy.RollingUpdate.MaxSurge = nru.MaxSurge
		}
		if !equalIntOrString(nru.MaxUnavailable, oru.MaxUnavailable) {
			p.Spec.Strategy.RollingUpdate.MaxUnavailable = nru.MaxUnavailable
		}
	}
	b, err := json.Marshal(p)
	return string(b), err
}

func equalInt32Ptr(a, b *int32) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func equalIntOrString(a, b *intstr.IntOrString) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
