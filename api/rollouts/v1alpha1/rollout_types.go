package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Rollout is the v1alpha1 form of a Rollout, as OpenKruise Rollouts
// v1alpha1 wrote it: the workload under spec.objectRef.workloadRef, the
// rolling style in the rollouts.kruise.io/rolling-style annotation, and
// steps with a traffic weight. It is served for manifests and tools written
// for that version; sluice stores and acts on the v1beta1 form.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.phase",description="The rollout phase."
// +kubebuilder:printcolumn:name="CANARY_STEP",type="integer",JSONPath=".status.canaryStatus.currentStepIndex",description="The step the release is at, counted from 1."
// +kubebuilder:printcolumn:name="CANARY_STATE",type="string",JSONPath=".status.canaryStatus.currentStepState",description="The state of the current step."
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",description="What the rollout is doing or waiting for."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired release behaviour.
	// +required
	Spec RolloutSpec `json:"spec"`

	// Status is the observed state of the release, written by the controller
	// (except canaryStatus.currentStepState and canaryStatus.nextStepIndex,
	// which users may patch to approve a step or jump to another one).
	// +optional
	Status RolloutStatus `json:"status,omitempty"`
}

// RolloutList is a list of Rollouts.
//
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Rollouts.
	Items []Rollout `json:"items"`
}

// RolloutSpec is the desired release behaviour of a Rollout.
type RolloutSpec struct {
	// ObjectRef names the workload to release.
	// +required
	ObjectRef ObjectRef `json:"objectRef"`

	// Strategy says how new revisions are released.
	// +required
	Strategy RolloutStrategy `json:"strategy"`

	// RolloutID is deprecated and has no effect: set the annotation
	// rollouts.kruise.io/rollout-id on the workload instead. It is kept
	// (through the conversion to v1beta1) so that it reads back as written.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	RolloutID string `json:"rolloutID,omitempty"`

	// Disabled hands the workload back to its own controller: a release in
	// progress is finished at once and later updates are no longer paused.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// ObjectRef says what a Rollout releases.
type ObjectRef struct {
	// WorkloadRef names the workload, in the Rollout's namespace.
	// +optional
	WorkloadRef *WorkloadRef `json:"workloadRef,omitempty"`
}

// WorkloadRef refers to a workload in the Rollout's namespace.
type WorkloadRef struct {
	// APIVersion is the group/version of the workload, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`

	// Kind is the kind of the workload, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`

	// Name is the name of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RolloutStrategy says how new revisions are released. v1alpha1 knows only
// the canary (or multi-batch) strategy.
type RolloutStrategy struct {
	// Paused freezes the release where it is, whatever the step state, until
	// it is set back to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Canary releases the new revision in steps, in place (multi-batch) or
	// through an extra canary workload, as the rollouts.kruise.io/
	// rolling-style annotation says.
	// +optional
	Canary *CanaryStrategy `json:"canary,omitempty"`
}

// CanaryStrategy releases a new revision in steps.
type CanaryStrategy struct {
	// Steps are the release steps, in order.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Steps []CanaryStep `json:"steps,omitempty"`

	// TrafficRoutings lists the Services and routes whose traffic is shifted
	// between the stable and the new revision.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	TrafficRoutings []TrafficRoutingRef `json:"trafficRoutings,omitempty"`

	// FailureThreshold is how many updated pods of a step may be unready for
	// the step to count as done: an absolute number or a percentage of the
	// updated pods, rounded up. Unset tolerates none, as OpenKruise
	// behaves; the Rollout annotation sluice.dev/failure-threshold-default:
	// maxUnavailable makes it tolerate the workload's maxUnavailable.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="failureThreshold must be a non-negative integer or a percentage between 0% and 100%"
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`

	// PatchPodTemplateMetadata adds labels and annotations to the pod template
	// of the extra canary workload.
	// +optional
	PatchPodTemplateMetadata *rolloutsv1beta1.PatchPodTemplateMetadata `json:"patchPodTemplateMetadata,omitempty"`
}

// CanaryStep is one step of a release.
type CanaryStep struct {
	TrafficRoutingStrategy `json:",inline"`

	// Replicas is how many pods run the new revision once this step is done,
	// counted from the start of the release: an absolute number, or a
	// percentage of the workload's replicas rounded up. Unset means the
	// step's weight as a percentage.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : self.matches('^(100|[1-9][0-9]?)%$')",message="replicas must be a positive integer or a percentage in (0%, 100%]"
	Replicas *intstr.IntOrString `json:"replicas,omitempty"`

	// Pause says how the step waits once it is done: without a duration until
	// it is approved, with one for that many seconds.
	// +optional
	Pause rolloutsv1beta1.RolloutPause `json:"pause,omitempty"`
}

// TrafficRoutingStrategy is the traffic part of a step.
type TrafficRoutingStrategy struct {
	// Weight is the percentage of traffic sent to the new revision (v1beta1
	// traffic "<weight>%").
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight *int32 `json:"weight,omitempty"`

	// RequestHeaderModifier changes the headers of requests routed to the new
	// revision.
	// +optional
	RequestHeaderModifier *rolloutsv1beta1.HTTPHeaderFilter `json:"requestHeaderModifier,omitempty"`

	// Matches send the requests they match to the new revision (A/B testing).
	// Matches are ORed; the headers inside one match are ANDed.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Matches []HttpRouteMatch `json:"matches,omitempty"`
}

// HttpRouteMatch selects requests by headers (v1alpha1 has no path and query
// parameter matches).
//
//nolint:revive // The name is part of the OpenKruise Rollouts API.
type HttpRouteMatch struct {
	// Headers match request headers; all must match.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Headers []rolloutsv1beta1.HTTPHeaderMatch `json:"headers,omitempty"`
}

// TrafficRoutingRef names the Service and the routes whose traffic a Rollout
// shifts.
type TrafficRoutingRef struct {
	// Service is the stable Service of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	Service string `json:"service"`

	// GracePeriodSeconds is how long to wait after each traffic change before
	// the next one. Default 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`

	// Ingress routes through a canary Ingress beside the named one.
	// +optional
	Ingress *rolloutsv1beta1.IngressTrafficRouting `json:"ingress,omitempty"`

	// Gateway routes through a Gateway API route.
	// +optional
	Gateway *rolloutsv1beta1.GatewayTrafficRouting `json:"gateway,omitempty"`

	// CustomNetworkRefs route through other resources, changed by Lua
	// scripts.
	// +optional
	CustomNetworkRefs []CustomNetworkRef `json:"customNetworkRefs,omitempty"`
}

// CustomNetworkRef refers to a resource that carries traffic, in the
// Rollout's namespace.
type CustomNetworkRef struct {
	// APIVersion is the group/version of the resource.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`

	// Kind is the kind of the resource.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`

	// Name is the name of the resource.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RolloutStatus is the observed state of a Rollout.
type RolloutStatus struct {
	// ObservedGeneration is the Rollout generation this status is based on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// CanaryStatus is the progress of the release.
	// +optional
	CanaryStatus *CanaryStatus `json:"canaryStatus,omitempty"`

	// Conditions are the Rollout's conditions: Progressing, Succeeded,
	// Terminating, Supported and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []rolloutsv1beta1.RolloutCondition `json:"conditions,omitempty"`

	// Phase is the Rollout's phase.
	// +optional
	Phase rolloutsv1beta1.RolloutPhase `json:"phase,omitempty"`

	// Message says what the Rollout is doing or waiting for.
	// +optional
	Message string `json:"message,omitempty"`

	// Aborted records an aborted release (a sluice extension, as in
	// v1beta1).
	// +optional
	Aborted *rolloutsv1beta1.AbortStatus `json:"aborted,omitempty"`
}

// CanaryStatus is the progress of a release.
type CanaryStatus struct {
	// ObservedWorkloadGeneration is the workload generation seen when the
	// release of the current revision was observed.
	// +optional
	ObservedWorkloadGeneration int64 `json:"observedWorkloadGeneration,omitempty"`

	// ObservedRolloutID is the rollout-id of the release: the workload's
	// rollouts.kruise.io/rollout-id, or the new revision.
	// +optional
	ObservedRolloutID string `json:"observedRolloutID,omitempty"`

	// RolloutHash is the hash of the strategy this progress is based on.
	// +optional
	RolloutHash string `json:"rolloutHash,omitempty"`

	// StableRevision is the revision being replaced.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`

	// CanaryRevision is the revision being released.
	// +optional
	CanaryRevision string `json:"canaryRevision"`

	// PodTemplateHash is the pod-template-hash of the new revision's pods.
	// +optional
	PodTemplateHash string `json:"podTemplateHash"`

	// CanaryReplicas is how many pods run the new revision.
	// +optional
	CanaryReplicas int32 `json:"canaryReplicas"`

	// CanaryReadyReplicas is how many pods of the new revision are ready.
	// +optional
	CanaryReadyReplicas int32 `json:"canaryReadyReplicas"`

	// CurrentStepIndex is the current step, counted from 1.
	// +optional
	CurrentStepIndex int32 `json:"currentStepIndex"`

	// NextStepIndex is the step that follows the current one; users may set
	// it to jump. -1 when there is none.
	// +optional
	NextStepIndex int32 `json:"nextStepIndex"`

	// CurrentStepState is the state of the current step; users set it to
	// StepReady to approve a paused step.
	// +optional
	CurrentStepState rolloutsv1beta1.CanaryStepState `json:"currentStepState"`

	// Message says what the release is doing.
	// +optional
	Message string `json:"message,omitempty"`

	// LastUpdateTime is when the step state last changed; timed pauses count
	// from it.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`

	// FinalisingStep is the finishing action in progress.
	// +optional
	FinalisingStep rolloutsv1beta1.FinalisingStepType `json:"finalisingStep"`
}
