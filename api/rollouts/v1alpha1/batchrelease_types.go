package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// BatchRelease is the v1alpha1 form of a BatchRelease, as OpenKruise
// Rollouts v1alpha1 wrote it: the workload under
// spec.targetReference.workloadRef, and the rolling style also in the
// rollouts.kruise.io/rolling-style annotation. It is served so that the
// BatchReleases OpenKruise stored as v1alpha1 (a cluster moving from
// OpenKruise) and tools written for that version keep working; sluice
// stores and acts on the v1beta1 form, converted by its conversion
// webhook (docs/v1alpha1.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="KIND",type="string",JSONPath=".spec.targetReference.workloadRef.kind",description="The kind of the workload."
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="The release phase."
// +kubebuilder:printcolumn:name="BATCH",type="integer",JSONPath=".status.canaryStatus.currentBatch",description="The current batch, from 0."
// +kubebuilder:printcolumn:name="BATCH-STATE",type="string",JSONPath=".status.canaryStatus.batchState",description="The state of the current batch."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type BatchRelease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the release plan.
	// +optional
	Spec BatchReleaseSpec `json:"spec,omitempty"`

	// Status is the progress of the plan; the same as in v1beta1.
	// +optional
	Status rolloutsv1beta1.BatchReleaseStatus `json:"status,omitempty"`
}

// BatchReleaseList is a list of BatchReleases.
//
// +kubebuilder:object:root=true
type BatchReleaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the BatchReleases.
	Items []BatchRelease `json:"items"`
}

// BatchReleaseSpec names a workload and the plan to release it by.
type BatchReleaseSpec struct {
	// TargetRef names the workload (v1beta1 spec.workloadRef).
	// +optional
	TargetRef ObjectRef `json:"targetReference"`

	// ReleasePlan is the list of batches and how far to go.
	// +optional
	ReleasePlan ReleasePlan `json:"releasePlan"`
}

// ReleasePlan is the list of batches of a release and how far to go; its
// fields mean what those of v1beta1's do.
type ReleasePlan struct {
	// Batches are the batches, in order.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Batches []rolloutsv1beta1.ReleaseBatch `json:"batches"`

	// BatchPartition is the last batch to release, from 0. Unset releases
	// everything and hands the workload back.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BatchPartition *int32 `json:"batchPartition,omitempty"`

	// RolloutID names this release; when it changes the release restarts.
	// +optional
	RolloutID string `json:"rolloutID,omitempty"`

	// FailureThreshold is how many updated pods of a batch may be unready
	// for the batch to count as done; unset means none.
	// +optional
	// +kubebuilder:validation:XIntOrString
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`

	// FinalizingPolicy is WaitResume or Immediate.
	// +optional
	// +kubebuilder:validation:Enum="";WaitResume;Immediate
	FinalizingPolicy rolloutsv1beta1.FinalizingPolicyType `json:"finalizingPolicy,omitempty"`

	// PatchPodTemplateMetadata adds labels and annotations to the pod
	// template of an extra canary workload.
	// +optional
	PatchPodTemplateMetadata *rolloutsv1beta1.PatchPodTemplateMetadata `json:"patchPodTemplateMetadata,omitempty"`

	// RollingStyle is Partition, Canary or BlueGreen. When empty, the
	// rollouts.kruise.io/rolling-style annotation (partition, canary or
	// bluegreen, in any case) chooses, as OpenKruise reads it.
	// +optional
	// +kubebuilder:validation:Enum="";Partition;Canary;BlueGreen
	RollingStyle rolloutsv1beta1.RollingStyleType `json:"rollingStyle,omitempty"`

	// EnableExtraWorkloadForCanary is the older way to choose Canary style;
	// it is read only when rollingStyle is empty.
	// +optional
	EnableExtraWorkloadForCanary bool `json:"enableExtraWorkloadForCanary"`
}
