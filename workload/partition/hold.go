package partition

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
)

// HoldFor returns how updates of a kind whose profile is kind are held:
// see hold.
func HoldFor(kind Profile) workload.Hold {
	return func(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
		return hold(kind.p, old, updated, rollout)
	}
}

// hold changes updated, an update of old by someone other than sluice, so
// that the Rollout named rollout keeps control of the workload:
//   - a new release (pod template or rollout-id changed) sets the partition
//     to the hold value, so no pod changes, marks the workload with
//     rollouts.kruise.io/in-progressing and, for a release that was not in
//     progress, records the restore patch (the partition the user asked
//     for); a new revision in the middle of a release is held the same way,
//     so the release starts over from its first batch;
//   - while a release is in progress, the partition and sluice's marks keep
//     their values, and a partition the user wrote goes into the restore
//     patch, to apply when the release ends; so do maxSurge,
//     maxUnavailable and minReadySeconds once a blue-green release holds
//     them.
//
// It reports whether it changed updated, and why.
func hold(p profile, old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
	o, u := object{p: p, u: old}, object{p: p, u: updated}
	if why := notEnrolled(u); why != "" {
		return false, why, nil
	}
	if !p.nodes {
		if n, ok := nestedInt(updated.Object, "spec", "replicas"); ok && n == 0 {
			return false, "no replicas", nil
		}
	}
	if p.rollingUpdateOnly {
		if t := u.strategyType(); t != "" && t != "RollingUpdate" {
			return false, fmt.Sprintf("spec.updateStrategy.type %s cannot be released in batches", t), nil
		}
	}
	oldTemplate, _, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "template")
	newTemplate, _, _ := unstructured.NestedFieldNoCopy(updated.Object, "spec", "template")
	newRelease := !equality.Semantic.DeepEqual(oldTemplate, newTemplate) ||
		workload.RolloutID(old.GetLabels(), old.GetAnnotations()) != workload.RolloutID(updated.GetLabels(), updated.GetAnnotations())
	_, inProgress := old.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation]
	if !newRelease && !inProgress {
		return false, "no new release", nil
	}
	if inProgress {
		if err := keepHeld(o, u); err != nil {
			return false, "", err
		}
	}
	if !newRelease {
		return true, "release in progress: sluice's fields kept", nil
	}
	if !inProgress {
		restore, err := newRestorePatch(p, updated.Object)
		if err != nil {
			return false, "", err
		}
		setAnnotation(updated, rolloutsv1beta1.InProgressingAnnotation, workload.InProgressing(rollout))
		setAnnotation(updated, restoreAnnotation, restore)
	}
	if err := unstructured.SetNestedField(updated.Object, p.hold, p.partition...); err != nil {
		return false, "", fmt.Errorf("holding %s: %w", u.name(), err)
	}
	return true, "new release held for rollout " + rollout, nil
}

// keepHeld gives updated the held fields and the marks of old, a workload
// a release holds, keeping the values the user changed in the restore
// patch.
func keepHeld(old, updated object) error {
	annotations := old.u.GetAnnotations()
	if raw, ok := annotations[restoreAnnotation]; ok {
		merged, err := withUserChanges(old.p, raw, old.u.Object, updated.u.Object)
		if err != nil {
			return err
		}
		setAnnotation(updated.u, restoreAnnotation, merged)
		patch := map[string]any{}
		if err := json.Unmarshal([]byte(raw), &patch); err == nil && blueGreenClaimed(patch) {
			if err := keepFields(old.u.Object, updated.u.Object, old.p.blueGreenPaths()); err != nil {
				return fmt.Errorf("keeping the fields held for a blue-green release of %s: %w", updated.name(), err)
			}
		}
	}
	workload.KeepMarks(old.u, updated.u, ownership.Annotation)
	if v, ok := old.partitionRaw(); ok {
		if err := unstructured.SetNestedField(updated.u.Object, v, old.p.partition...); err != nil {
			return fmt.Errorf("keeping the partition of %s: %w", updated.name(), err)
		}
	}
	return nil
}

// keepFields gives updated the values old has at paths (removing those
// old does not have).
func keepFields(old, updated map[string]any, paths [][]string) error {
	for _, path := range paths {
		v, found, err := unstructured.NestedFieldCopy(old, path...)
		if err != nil {
			return err
		}
		if !found {
			unstructured.RemoveNestedField(updated, path...)
			continue
		}
		if err := unstructured.SetNestedField(updated, v, path...); err != nil {
			return err
		}
	}
	return nil
}

func setAnnotation(u *unstructured.Unstructured, k, v string) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	u.SetAnnotations(a)
}
