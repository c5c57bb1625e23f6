package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// CloneSetSpec is the desired state of a CloneSet.
type CloneSetSpec struct {
	// Replicas is the desired number of pods (default 1).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods of the CloneSet.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the pod template.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`
	// UpdateStrategy says how pods are updated to a new template.
	// +optional
	UpdateStrategy CloneSetUpdateStrategy `json:"updateStrategy,omitempty"`
	// MinReadySeconds is how long a new pod must be ready to be available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
}

// CloneSetUpdateStrategy says how a CloneSet updates its pods.
type CloneSetUpdateStrategy struct {
	// Type is ReCreate, InPlaceIfPossible or InPlaceOnly.
	// +optional
	Type string `json:"type,omitempty"`
	// Partition is how many pods (a number, or a percentage of replicas
	// rounded up) stay on the old revision.
	// +optional
	Partition *intstr.IntOrString `json:"partition,omitempty"`
	// MaxUnavailable is how many pods may be unavailable during an update
	// (default 20%).
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge is how many pods may be created above replicas during an
	// update (default 0).
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// Paused stops updating pods.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// CloneSetStatus is the observed state of a CloneSet.
type CloneSetStatus struct {
	// ObservedGeneration is the generation the controller last acted on.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas counts the pods.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas counts the ready pods.
	ReadyReplicas int32 `json:"readyReplicas"`
	// AvailableReplicas counts the available pods.
	AvailableReplicas int32 `json:"availableReplicas"`
	// UpdatedReplicas counts the pods of the update revision.
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// UpdatedReadyReplicas counts the ready pods of the update revision.
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas"`
	// ExpectedUpdatedReplicas is how many pods the partition lets update.
	// +optional
	ExpectedUpdatedReplicas int32 `json:"expectedUpdatedReplicas,omitempty"`
	// UpdateRevision names the revision of the current template,
	// "<name>-<hash>".
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`
	// CurrentRevision names the revision all pods ran before the update.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`
	// LabelSelector is the pod selector, serialized, for the scale
	// subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// CloneSet manages stateless pods with in-place and partitioned updates.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=clone
type CloneSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec CloneSetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status CloneSetStatus `json:"status,omitempty"`
}

// CloneSetList is a list of CloneSets.
//
// +kubebuilder:object:root=true
type CloneSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CloneSets.
	Items []CloneSet `json:"items"`
}
