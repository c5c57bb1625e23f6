package daemonset

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

// restorePatch is the JSON merge patch kept in the sluice.dev/restore-patch
// annotation while a release holds a DaemonSet. Applied as it is, by sluice
// or by hand with kubectl, it gives the DaemonSet back its own update
// strategy and drops sluice's annotations and labels.
type restorePatch struct {
	Metadata workload.RestoreMarks `json:"metadata"`
	Spec     restoreSpec           `json:"spec"`
}

type restoreSpec struct {
	UpdateStrategy restoreStrategy `json:"updateStrategy"`
}

// restoreStrategy is the DaemonSet's own update strategy. RollingUpdate is
// always written, null when the DaemonSet had none, so the patch sets the
// whole strategy back.
type restoreStrategy struct {
	Type          appsv1.DaemonSetUpdateStrategyType `json:"type"`
	RollingUpdate *appsv1.RollingUpdateDaemonSet     `json:"rollingUpdate"`
}

// newRestorePatch captures the update strategy s, the DaemonSet's own, and
// the marks a release leaves on the DaemonSet, the record of the held
// fields' owners among them.
func newRestorePatch(s appsv1.DaemonSetUpdateStrategy) restorePatch {
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	return restorePatch{
		Metadata: workload.NewRestoreMarks(ownership.Annotation),
		Spec:     restoreSpec{UpdateStrategy: restoreStrategy{Type: s.Type, RollingUpdate: s.RollingUpdate.DeepCopy()}},
	}
}

// encode renders p as the annotation value.
func (p restorePatch) encode() string {
	b, _ := json.Marshal(p) // strings, string pointers and intstr values: cannot fail
	return string(b)
}

// readRestorePatch parses the restore annotation of ds; ok is false when ds
// has none.
func readRestorePatch(ds *appsv1.DaemonSet) (p restorePatch, ok bool, err error) {
	raw, found := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if !found {
		return p, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, false, fmt.Errorf("annotation %s of DaemonSet %s/%s: %w",
			rolloutsv1beta1.DeploymentOriginalAnnotation, ds.Namespace, ds.Name, err)
	}
	return p, true, nil
}

// userStrategy is the update strategy the DaemonSet gets back when its
// release ends: the one in its restore patch, or its own when it has none.
func userStrategy(ds *appsv1.DaemonSet) (appsv1.DaemonSetUpdateStrategy, error) {
	p, ok, err := readRestorePatch(ds)
	if err != nil {
		return appsv1.DaemonSetUpdateStrategy{}, err
	}
	if !ok {
		return ds.Spec.UpdateStrategy, nil
	}
	return appsv1.DaemonSetUpdateStrategy{Type: p.Spec.UpdateStrategy.Type, RollingUpdate: p.Spec.UpdateStrategy.RollingUpdate}, nil
}

// mergeUserChanges folds into the restore patch raw the update strategy a
// user wrote in updated, when it differs from the held one in old, so that
// it takes effect when the release ends instead of being lost.
func mergeUserChanges(raw string, old, updated *appsv1.DaemonSet) (string, error) {
	var p restorePatch
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "", fmt.Errorf("annotation %s: %w", rolloutsv1beta1.DeploymentOriginalAnnotation, err)
	}
	o, u := old.Spec.UpdateStrategy, updated.Spec.UpdateStrategy
	if u.Type != o.Type && u.Type != "" {
		p.Spec.UpdateStrategy.Type = u.Type
	}
	if !apiequality.Semantic.DeepEqual(u.RollingUpdate, o.RollingUpdate) {
		p.Spec.UpdateStrategy.RollingUpdate = u.RollingUpdate.DeepCopy()
	}
	return p.encode(), nil
}
