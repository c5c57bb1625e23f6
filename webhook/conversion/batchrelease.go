package conversion

import (
	"strings"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// batchReleaseBeta is what a v1beta1 BatchRelease says that v1alpha1
// cannot, kept in the V1beta1FieldsAnnotation of its v1alpha1 form.
type batchReleaseBeta struct {
	// HoldStable is spec.releasePlan.holdStable, a sluice extension.
	HoldStable bool `json:"holdStable,omitempty"`
}

// batchReleaseAlpha is what a v1alpha1 BatchRelease says that v1beta1
// cannot, kept in the V1alpha1FieldsAnnotation of its v1beta1 form.
type batchReleaseAlpha struct {
	// RollingStyleUnset records that spec.releasePlan.rollingStyle was
	// empty and the v1beta1 one was taken from the rolling-style
	// annotation.
	RollingStyleUnset bool `json:"rollingStyleUnset,omitempty"`
}

// BatchReleaseToV1beta1 converts a v1alpha1 BatchRelease (as OpenKruise
// stored it, or as a user writes it) to its stored v1beta1 form. It sets
// dst's metadata, spec and status and leaves its type meta alone; src is
// not changed.
//
//   - spec.targetReference.workloadRef becomes spec.workloadRef;
//   - an empty rollingStyle is taken from the rollouts.kruise.io/rolling-style
//     annotation (partition, canary, bluegreen, in any case), as OpenKruise
//     reads it; the annotation stays;
//   - the rest of the plan and the status are the same in both versions;
//   - what the V1beta1FieldsAnnotation kept of an earlier v1beta1 form
//     (holdStable) comes back.
func BatchReleaseToV1beta1(src *rolloutsv1alpha1.BatchRelease, dst *rolloutsv1beta1.BatchRelease) {
	in := src.DeepCopy()
	kept := readFields[batchReleaseBeta](in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)

	dst.ObjectMeta = in.ObjectMeta
	var ref rolloutsv1beta1.ObjectRef
	if w := in.Spec.TargetRef.WorkloadRef; w != nil {
		ref = rolloutsv1beta1.ObjectRef{APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name}
	}
	p := in.Spec.ReleasePlan
	dst.Spec = rolloutsv1beta1.BatchReleaseSpec{
		WorkloadRef: ref,
		ReleasePlan: rolloutsv1beta1.ReleasePlan{
			Batches:                      p.Batches,
			BatchPartition:               p.BatchPartition,
			RolloutID:                    p.RolloutID,
			FailureThreshold:             p.FailureThreshold,
			FinalizingPolicy:             p.FinalizingPolicy,
			PatchPodTemplateMetadata:     p.PatchPodTemplateMetadata,
			RollingStyle:                 p.RollingStyle,
			EnableExtraWorkloadForCanary: p.EnableExtraWorkloadForCanary,
			HoldStable:                   kept.HoldStable,
		},
	}
	var alpha batchReleaseAlpha
	if p.RollingStyle == "" {
		if style := styleOf(in.Annotations[rolloutsv1beta1.RollingStyleAnnotation]); style != "" {
			dst.Spec.ReleasePlan.RollingStyle = style
			alpha.RollingStyleUnset = true
		}
	}
	dst.Status = in.Status
	writeFields(&dst.ObjectMeta, rolloutsv1alpha1.V1alpha1FieldsAnnotation, alpha)
}

// BatchReleaseToV1alpha1 converts a stored v1beta1 BatchRelease to its
// v1alpha1 form, the reverse of BatchReleaseToV1beta1. holdStable, which
// v1alpha1 has no field for, goes into the V1beta1FieldsAnnotation.
func BatchReleaseToV1alpha1(src *rolloutsv1beta1.BatchRelease, dst *rolloutsv1alpha1.BatchRelease) {
	in := src.DeepCopy()
	alpha := readFields[batchReleaseAlpha](in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)

	dst.ObjectMeta = in.ObjectMeta
	dst.Spec = rolloutsv1alpha1.BatchReleaseSpec{}
	if w := in.Spec.WorkloadRef; w != (rolloutsv1beta1.ObjectRef{}) {
		dst.Spec.TargetRef.WorkloadRef = &rolloutsv1alpha1.WorkloadRef{APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name}
	}
	p := in.Spec.ReleasePlan
	dst.Spec.ReleasePlan = rolloutsv1alpha1.ReleasePlan{
		Batches:                      p.Batches,
		BatchPartition:               p.BatchPartition,
		RolloutID:                    p.RolloutID,
		FailureThreshold:             p.FailureThreshold,
		FinalizingPolicy:             p.FinalizingPolicy,
		PatchPodTemplateMetadata:     p.PatchPodTemplateMetadata,
		RollingStyle:                 p.RollingStyle,
		EnableExtraWorkloadForCanary: p.EnableExtraWorkloadForCanary,
	}
	if alpha.RollingStyleUnset && styleOf(in.Annotations[rolloutsv1beta1.RollingStyleAnnotation]) == p.RollingStyle {
		dst.Spec.ReleasePlan.RollingStyle = ""
	}
	dst.Status = in.Status
	writeFields(&dst.ObjectMeta, rolloutsv1alpha1.V1beta1FieldsAnnotation, batchReleaseBeta{HoldStable: p.HoldStable})
}

// styleOf reads the rollouts.kruise.io/rolling-style annotation of a
// BatchRelease as OpenKruise does: partition, canary or bluegreen in any
// case; anything else chooses nothing.
func styleOf(annotation string) rolloutsv1beta1.RollingStyleType {
	for _, s := range []rolloutsv1beta1.RollingStyleType{rolloutsv1beta1.PartitionRollingStyle, rolloutsv1beta1.CanaryRollingStyle, rolloutsv1beta1.BlueGreenRollingStyle} {
		if strings.EqualFold(annotation, string(s)) {
			return s
		}
	}
	return ""
}
