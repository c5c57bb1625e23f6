package canarydeployment

import (
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// Label marks a canary Deployment, its selector and its pods with the name
// of the stable Deployment they release (OpenKruise's label of the same
// name). Being part of the canary's selector and pod template, it gives the
// canary's pods a pod-template-hash of their own and keeps the canary's
// ReplicaSet from ever selecting the stable Deployment's pods, or the
// stable's ReplicaSets the canary's.
const Label = "rollouts.kruise.io/canary-deployment"

// Name is the name of the canary Deployment that releases revision (the
// pod-template-hash of the stable Deployment's new template) of the
// Deployment stable: "<stable>-canary-<revision>". One fixed name per
// revision means that sluice, restarted, finds the canary it created
// instead of creating a second one, and that a new revision mid-release
// gets a canary of its own.
func Name(stable, revision string) string {
	return stable + "-canary-" + revision
}

// newCanary builds the canary Deployment that releases the pod template of
// stable (its new template, while the stable is paused) as revision:
//   - named Name(stable, revision), labelled Label=<stable>, owned (not
//     controlled) by stable, so deleting the stable deletes it;
//   - the stable's spec with 0 replicas and not paused; the selector and the
//     pod template also carry Label=<stable>;
//   - the pod template gets meta's labels and annotations (Label wins over
//     a label of meta with the same key).
//
// It fails, wrapping workload.ErrUnsupported, when stable's name cannot be
// a label value or meta's labels contradict the selector.
func newCanary(stable *appsv1.Deployment, revision string, meta *rolloutsv1beta1.PatchPodTemplateMetadata) (*appsv1.Deployment, error) {
	if errs := validation.IsValidLabelValue(stable.Name); len(errs) > 0 {
		return nil, fmt.Errorf("deployment %s/%s: its name is the value of label %s on the canary Deployment: %s: %w",
			stable.Namespace, stable.Name, Label, strings.Join(errs, "; "), workload.ErrUnsupported)
	}
	spec := *stable.Spec.DeepCopy()
	spec.Replicas = new(int32)
	spec.Paused = false

	spec.Selector = stable.Spec.Selector.DeepCopy()
	if spec.Selector == nil {
		spec.Selector = &metav1.LabelSelector{}
	}
	if spec.Selector.MatchLabels == nil {
		spec.Selector.MatchLabels = map[string]string{}
	}
	spec.Selector.MatchLabels[Label] = stable.Name

	tpl := &spec.Template
	tpl.Labels = maps.Clone(tpl.Labels)
	if tpl.Labels == nil {
		tpl.Labels = map[string]string{}
	}
	if meta != nil {
		maps.Copy(tpl.Labels, meta.Labels)
		if len(meta.Annotations) > 0 {
			tpl.Annotations = maps.Clone(tpl.Annotations)
			if tpl.Annotations == nil {
				tpl.Annotations = map[string]string{}
			}
			maps.Copy(tpl.Annotations, meta.Annotations)
		}
	}
	tpl.Labels[Label] = stable.Name

	sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of deployment %s/%s: %w", stable.Namespace, stable.Name, err)
	}
	if !sel.Matches(labels.Set(tpl.Labels)) {
		return nil, fmt.Errorf("patchPodTemplateMetadata.labels %v contradict the selector %s of deployment %s/%s: %w",
			meta.Labels, sel, stable.Namespace, stable.Name, workload.ErrUnsupported)
	}

	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: stable.Namespace,
			Name:      Name(stable.Name, revision),
			Labels:    map[string]string{Label: stable.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: appsv1.SchemeGroupVersion.String(),
				Kind:       "Deployment",
				Name:       stable.Name,
				UID:        stable.UID,
			}},
		},
		Spec: spec,
	}, nil
}

// ownedBy reports whether d names stable among its owners.
func ownedBy(d, stable *appsv1.Deployment) bool {
	for _, ref := range d.OwnerReferences {
		if ref.UID == stable.UID {
			return true
		}
	}
	return false
}
