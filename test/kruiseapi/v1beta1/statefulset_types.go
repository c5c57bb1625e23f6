package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StatefulSetSpec is the desired state of an Advanced StatefulSet.
type StatefulSetSpec struct {
	// Replicas is the desired number of pods (default 1).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the pods of the StatefulSet.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the pod template.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`
	// ServiceName names the governing Service.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// PodManagementPolicy is OrderedReady or Parallel.
	// +optional
	PodManagementPolicy string `json:"podManagementPolicy,omitempty"`
	// UpdateStrategy says how pods are updated to a new template.
	// +optional
	UpdateStrategy StatefulSetUpdateStrategy `json:"updateStrategy,omitempty"`
}

// StatefulSetUpdateStrategy says how an Advanced StatefulSet updates its
// pods.
type StatefulSetUpdateStrategy struct {
	// Type is RollingUpdate (default) or OnDelete.
	// +optional
	Type string `json:"type,omitempty"`
	// RollingUpdate tunes the RollingUpdate type.
	// +optional
	RollingUpdate *RollingUpdateStatefulSetStrategy `json:"rollingUpdate,omitempty"`
}

// RollingUpdateStatefulSetStrategy tunes a rolling update.
type RollingUpdateStatefulSetStrategy struct {
	// Partition is the lowest ordinal updated: pods below it keep their
	// revision.
	// +optional
	Partition *int32 `json:"partition,omitempty"`
	// MaxUnavailable is how many pods may be unavailable during an update
	// (default 1).
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// PodUpdatePolicy is ReCreate, InPlaceIfPossible or InPlaceOnly.
	// +optional
	PodUpdatePolicy string `json:"podUpdatePolicy,omitempty"`
	// Paused stops updating pods.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// MinReadySeconds is how long a new pod must be ready to be available.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
}

// StatefulSetStatus is the observed state of an Advanced StatefulSet.
type StatefulSetStatus struct {
	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas counts the pods.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas counts the ready pods.
	ReadyReplicas int32 `json:"readyReplicas"`
	// AvailableReplicas counts the available pods.
	AvailableReplicas int32 `json:"availableReplicas"`
	// CurrentReplicas counts the pods of the current revision.
	CurrentReplicas int32 `json:"currentReplicas"`
	// UpdatedReplicas counts the pods of the update revision.
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// UpdatedReadyReplicas counts the ready pods of the update revision.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`
	// CurrentRevision names the revision of the pods below the partition.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`
	// UpdateRevision names the revision of the current template.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`
	// LabelSelector is the pod selector, serialized, for the scale
	// subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// StatefulSet is an Advanced StatefulSet; v1beta1 is its storage version.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=asts
// +kubebuilder:storageversion
type StatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec StatefulSetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status StatefulSetStatus `json:"status,omitempty"`
}

// StatefulSetList is a list of Advanced StatefulSets.
//
// +kubebuilder:object:root=true
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the StatefulSets.
	Items []StatefulSet `json:"items"`
}
