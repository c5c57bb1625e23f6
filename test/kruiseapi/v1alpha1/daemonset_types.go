package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DaemonSetSpec is the desired state of an Advanced DaemonSet.
type DaemonSetSpec struct {
	// Selector selects the pods of the DaemonSet.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the pod template.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`
	// UpdateStrategy says how pods are updated to a new template.
	// +optional
	UpdateStrategy DaemonSetUpdateStrategy `json:"updateStrategy,omitempty"`
	// MinReadySeconds is how long a new pod must be ready to be available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
}

// DaemonSetUpdateStrategy says how an Advanced DaemonSet updates its pods.
type DaemonSetUpdateStrategy struct {
	// Type is RollingUpdate (default) or OnDelete.
	// +optional
	Type string `json:"type,omitempty"`
	// RollingUpdate tunes the RollingUpdate type.
	// +optional
	RollingUpdate *RollingUpdateDaemonSet `json:"rollingUpdate,omitempty"`
}

// RollingUpdateDaemonSet tunes a rolling update.
type RollingUpdateDaemonSet struct {
	// Type is Standard or InPlaceIfPossible.
	// +optional
	Type string `json:"rollingUpdateType,omitempty"`
	// MaxUnavailable is how many pods may be unavailable during an update
	// (default 1).
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxSurge is how many nodes may run an extra pod during an update.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// Selector limits the update to matching nodes.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Partition is how many nodes keep the old revision.
	// +optional
	Partition *int32 `json:"partition,omitempty"`
	// Paused stops updating pods.
	// +optional
	Paused *bool `json:"paused,omitempty"`
}

// DaemonSetStatus is the observed state of an Advanced DaemonSet.
type DaemonSetStatus struct {
	// CurrentNumberScheduled counts the nodes running a pod that should.
	CurrentNumberScheduled int32 `json:"currentNumberScheduled"`
	// NumberMisscheduled counts the nodes running a pod that should not.
	NumberMisscheduled int32 `json:"numberMisscheduled"`
	// DesiredNumberScheduled counts the nodes that should run a pod.
	DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`
	// NumberReady counts the nodes whose pod is ready.
	NumberReady int32 `json:"numberReady"`
	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// UpdatedNumberScheduled counts the nodes running the update revision.
	// +optional
	UpdatedNumberScheduled int32 `json:"updatedNumberScheduled,omitempty"`
	// NumberAvailable counts the nodes whose pod is available.
	// +optional
	NumberAvailable int32 `json:"numberAvailable,omitempty"`
	// DaemonSetHash is the controller-revision-hash of the update revision.
	DaemonSetHash string `json:"daemonSetHash"`
}

// DaemonSet is an Advanced DaemonSet.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ads
type DaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec DaemonSetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetList is a list of Advanced DaemonSets.
//
// +kubebuilder:object:root=true
type DaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DaemonSets.
	Items []DaemonSet `json:"items"`
}
