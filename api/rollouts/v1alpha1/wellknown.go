package v1alpha1

// Annotations that carry, across the conversion between v1alpha1 and
// v1beta1, what one version can say and the other cannot. Both hold JSON
// written and read only by the conversion webhook; they are removed again
// when the object is converted back, so a user never needs to write them.
const (
	// V1beta1FieldsAnnotation is set on a Rollout read as v1alpha1 when its
	// stored (v1beta1) form has settings v1alpha1 has no field for: a
	// blueGreen strategy, disableGenerateCanaryService, the path and query
	// parameters of step matches, a step without replicas, or a
	// rolling-style or trafficrouting annotation the conversion rewrote.
	// Writing the object back as v1alpha1 restores them, so a
	// read-modify-write through v1alpha1 loses nothing.
	V1beta1FieldsAnnotation = "sluice.dev/v1beta1-fields"

	// V1alpha1FieldsAnnotation is set on a Rollout stored (as v1beta1) from a
	// v1alpha1 write when the v1alpha1 form had settings v1beta1 has no
	// field for: the deprecated spec.rolloutID, and steps without replicas
	// (whose replicas v1beta1 takes from the weight). Reading the object as
	// v1alpha1 gives them back.
	V1alpha1FieldsAnnotation = "sluice.dev/v1alpha1-fields"
)

// The values of the rollouts.kruise.io/rolling-style annotation
// (rolloutsv1beta1.RollingStyleAnnotation), the v1alpha1 way to choose
// between an extra canary workload and releasing in place.
const (
	// RollingStyleCanary releases a Deployment through an extra canary
	// Deployment (v1beta1 enableExtraWorkloadForCanary: true).
	RollingStyleCanary = "canary"
	// RollingStylePartition releases the workload in place, in batches
	// (v1beta1 enableExtraWorkloadForCanary: false).
	RollingStylePartition = "partition"
)
