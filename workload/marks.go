package workload

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The marks a release puts on a workload, written and read the same way by
// every adapter.

// InProgressing is the rollouts.kruise.io/in-progressing annotation value
// that names the Rollout holding a workload.
func InProgressing(rollout string) string {
	b, _ := json.Marshal(map[string]string{"rolloutName": rollout}) // a map of strings: cannot fail
	return string(b)
}

// InProgressRollout names the Rollout in the rollouts.kruise.io/in-progressing
// annotation of a workload with annotations; empty when there is none. A
// value that is not JSON is taken as the name.
func InProgressRollout(annotations map[string]string) string {
	raw := annotations[rolloutsv1beta1.InProgressingAnnotation]
	if raw == "" {
		return ""
	}
	var v struct {
		RolloutName string `json:"rolloutName"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return strings.TrimSpace(raw)
	}
	return v.RolloutName
}

// ClaimMetadata returns the annotations and labels that claiming the
// workload obj for owner writes, as merge patch values: the restore patch
// restore returns when obj has none, the control information naming owner
// when obj's differs, and the stable revision stable returns when obj has
// no stable-revision label and stable finds one (non-empty). restore and
// stable are called only when needed. Both maps are empty when obj is
// claimed already.
func ClaimMetadata(obj metav1.Object, owner Owner, restore, stable func() (string, error)) (annotations, labels map[string]any, err error) {
	annotations, labels = map[string]any{}, map[string]any{}
	if _, ok := obj.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok {
		raw, err := restore()
		if err != nil {
			return nil, nil, err
		}
		annotations[rolloutsv1beta1.DeploymentOriginalAnnotation] = raw
	}
	info, err := json.Marshal(owner)
	if err != nil {
		return nil, nil, err
	}
	if obj.GetAnnotations()[rolloutsv1beta1.ControlInfoAnnotation] != string(info) {
		annotations[rolloutsv1beta1.ControlInfoAnnotation] = string(info)
	}
	if _, ok := obj.GetLabels()[rolloutsv1beta1.StableRevisionLabel]; !ok {
		rev, err := stable()
		if err != nil {
			return nil, nil, err
		}
		if rev != "" {
			labels[rolloutsv1beta1.StableRevisionLabel] = rev
		}
	}
	return annotations, labels, nil
}

// TypedHold is the Hold of a typed kind (T, e.g. appsv1.Deployment, named
// kind in errors) whose hold works on decoded objects: it decodes old and
// updated, holds, and encodes updated back when hold changed it.
func TypedHold[T any](kind string, hold func(old, updated *T, rollout string) (bool, string)) Hold {
	return func(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
		o, u := new(T), new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(old.Object, o); err != nil {
			return false, "", fmt.Errorf("decoding the stored %s: %w", kind, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(updated.Object, u); err != nil {
			return false, "", fmt.Errorf("decoding the %s update: %w", kind, err)
		}
		changed, why := hold(o, u, rollout)
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
}

// RestoreMarks is the metadata part of every restore patch: null for each
// mark a release leaves (the restore patch, control information and
// in-progressing annotations, the stable-revision label), so that applying
// the patch removes them.
type RestoreMarks struct {
	// Annotations map the annotations to remove to null.
	Annotations map[string]*string `json:"annotations"`
	// Labels map the labels to remove to null.
	Labels map[string]*string `json:"labels"`
}

// NewRestoreMarks removes sluice's marks and the annotations also names.
func NewRestoreMarks(also ...string) RestoreMarks {
	m := RestoreMarks{
		Annotations: map[string]*string{
			rolloutsv1beta1.DeploymentOriginalAnnotation: nil,
			rolloutsv1beta1.ControlInfoAnnotation:        nil,
			rolloutsv1beta1.InProgressingAnnotation:      nil,
		},
		Labels: map[string]*string{rolloutsv1beta1.StableRevisionLabel: nil},
	}
	for _, k := range also {
		m.Annotations[k] = nil
	}
	return m
}

// KeepMarks gives updated, an update of a held workload by someone other
// than sluice, the marks old has: the in-progressing and control
// information annotations, those also names, and the stable-revision
// label. (The restore patch is each adapter's: it folds the user's
// changes into it.)
func KeepMarks(old, updated metav1.Object, also ...string) {
	keep := func(from, to map[string]string, keys []string) map[string]string {
		for _, k := range keys {
			if v, ok := from[k]; ok {
				if to == nil {
					to = map[string]string{}
				}
				to[k] = v
			}
		}
		return to
	}
	keys := append([]string{rolloutsv1beta1.InProgressingAnnotation, rolloutsv1beta1.ControlInfoAnnotation}, also...)
	if a := keep(old.GetAnnotations(), updated.GetAnnotations(), keys); a != nil {
		updated.SetAnnotations(a)
	}
	if l := keep(old.GetLabels(), updated.GetLabels(), []string{rolloutsv1beta1.StableRevisionLabel}); l != nil {
		updated.SetLabels(l)
	}
}
