package conversion

import (
	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// ToV1beta1 converts a v1alpha1 Rollout to its stored v1beta1 form. It sets
// dst's metadata, spec and status and leaves its type meta alone; src is not
// changed.
//
//   - spec.objectRef.workloadRef becomes spec.workloadRef;
//   - the rollouts.kruise.io/rolling-style annotation becomes
//     enableExtraWorkloadForCanary: "canary" true, "partition" false, any
//     other value (or none) true for an apps Deployment and false for other
//     kinds, as OpenKruise defaults it; the annotation stays;
//   - the rollouts.kruise.io/trafficrouting annotation becomes
//     trafficRoutingRef; the annotation stays;
//   - a step's weight W becomes traffic "W%", and a step without replicas
//     gets replicas "W%";
//   - canaryStatus becomes canaryStatus (blueGreenStatus for a blue-green
//     Rollout) and is mirrored in status.currentStepIndex and
//     currentStepState;
//   - what v1beta1 cannot say (spec.rolloutID, which steps had no replicas)
//     goes into the V1alpha1FieldsAnnotation, and what the
//     V1beta1FieldsAnnotation kept of an earlier v1beta1 form comes back.
func ToV1beta1(src *rolloutsv1alpha1.Rollout, dst *rolloutsv1beta1.Rollout) {
	in := src.DeepCopy()
	kept := readFields[v1beta1Fields](in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)

	dst.ObjectMeta = in.ObjectMeta
	dst.Spec = specToV1beta1(&in.Spec, in.Annotations)
	kept.restore(&dst.Spec, &in.Spec)
	kept.restoreAnnotations(&dst.ObjectMeta)
	dst.Status = statusToV1beta1(&in.Status, isBlueGreen(&dst.Spec))
	writeFields(&dst.ObjectMeta, rolloutsv1alpha1.V1alpha1FieldsAnnotation, alphaOnly(&in.Spec, &dst.Spec))
}

// ToV1alpha1 converts a stored v1beta1 Rollout to its v1alpha1 form, the
// reverse of ToV1beta1. It sets dst's metadata, spec and status and leaves
// its type meta alone; src is not changed.
//
// What v1alpha1 cannot say goes into the V1beta1FieldsAnnotation: a
// blueGreen strategy (the Rollout then reads with no canary strategy),
// disableGenerateCanaryService, the path and query parameters of step
// matches, a traffic that is not a whole percentage, a step without
// replicas. A rolling-style or trafficrouting annotation that disagrees with
// enableExtraWorkloadForCanary or trafficRoutingRef is rewritten to agree,
// and its stored value is kept there too.
func ToV1alpha1(src *rolloutsv1beta1.Rollout, dst *rolloutsv1alpha1.Rollout) {
	in := src.DeepCopy()
	alpha := readFields[v1alpha1Fields](in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1alpha1FieldsAnnotation)
	delete(in.Annotations, rolloutsv1alpha1.V1beta1FieldsAnnotation)

	var kept v1beta1Fields
	dst.ObjectMeta = in.ObjectMeta
	dst.Spec = specToV1alpha1(&in.Spec, &kept)
	alpha.restore(&dst.Spec, &in.Spec)
	kept.Annotations = agreeAnnotations(&dst.ObjectMeta, &in.Spec)
	dst.Status = statusToV1alpha1(&in.Status, isBlueGreen(&in.Spec))
	writeFields(&dst.ObjectMeta, rolloutsv1alpha1.V1beta1FieldsAnnotation, kept)
}

// isBlueGreen reports whether a v1beta1 spec is a blue-green release.
func isBlueGreen(spec *rolloutsv1beta1.RolloutSpec) bool {
	return spec.Strategy.BlueGreen != nil && spec.Strategy.Canary == nil
}
