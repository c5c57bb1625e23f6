package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Rollout releases a workload it does not own (a Deployment, StatefulSet,
// DaemonSet, OpenKruise workload or StatefulSet-like custom resource) in
// steps: each step updates part of the pods, optionally shifts traffic, and
// waits for an approval or a timed pause before the next one.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.phase",description="The rollout phase."
// +kubebuilder:printcolumn:name="CANARY_STEP",type="integer",JSONPath=".status.currentStepIndex",description="The step the release is at, counted from 1."
// +kubebuilder:printcolumn:name="CANARY_STATE",type="string",JSONPath=".status.currentStepState",description="The state of the current step."
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",description="What the rollout is doing or waiting for."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired release behaviour.
	// +required
	Spec RolloutSpec `json:"spec"`

	// Status is the observed state of the release, written by the controller
	// (except currentStepState and nextStepIndex, which users may patch to
	// approve a step or jump to another one).
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
	// WorkloadRef names the workload to release, in the Rollout's namespace.
	// +required
	WorkloadRef ObjectRef `json:"workloadRef"`

	// Strategy says how new revisions are released.
	// +required
	Strategy RolloutStrategy `json:"strategy"`

	// Disabled hands the workload back to its own controller: a release in
	// progress is finished at once and later updates are no longer paused.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// ObjectRef refers to an object in the Rollout's namespace.
type ObjectRef struct {
	// APIVersion is the group/version of the referent, e.g. apps/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`

	// Kind is the kind of the referent, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`

	// Name is the name of the referent.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RolloutStrategy chooses between a canary (or multi-batch) release and a
// blue-green release. Exactly one of canary and blueGreen is set.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.canary) && has(self.blueGreen))",message="set exactly one of canary and blueGreen, not both"
type RolloutStrategy struct {
	// Paused freezes the release where it is, whatever the step state, until
	// it is set back to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Canary releases the new revision in steps, either in place (multi-batch)
	// or through an extra canary workload.
	// +optional
	Canary *CanaryStrategy `json:"canary,omitempty"`

	// BlueGreen runs the new revision beside the old one and moves traffic
	// in steps.
	// +optional
	BlueGreen *BlueGreenStrategy `json:"blueGreen,omitempty"`
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
	// updated pods, rounded up. Unset means none, as OpenKruise behaves;
	// the Rollout annotation sluice.dev/failure-threshold-default:
	// maxUnavailable makes it the workload's own maxUnavailable.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="failureThreshold must be a non-negative integer or a percentage between 0% and 100%"
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`

	// PatchPodTemplateMetadata adds labels and annotations to the pod template
	// of the extra canary workload.
	// +optional
	PatchPodTemplateMetadata *PatchPodTemplateMetadata `json:"patchPodTemplateMetadata,omitempty"`

	// EnableExtraWorkloadForCanary releases a Deployment through a separate
	// canary Deployment instead of updating its pods in place.
	// +optional
	EnableExtraWorkloadForCanary bool `json:"enableExtraWorkloadForCanary,omitempty"`

	// TrafficRoutingRef names a TrafficRouting object whose routes this
	// Rollout shares.
	// +optional
	TrafficRoutingRef string `json:"trafficRoutingRef,omitempty"`

	// DisableGenerateCanaryService uses the stable Service for the canary
	// instead of generating a <service>-canary Service.
	// +optional
	DisableGenerateCanaryService bool `json:"disableGenerateCanaryService,omitempty"`
}

// BlueGreenStrategy runs the new revision beside the old one and shifts
// traffic in steps.
type BlueGreenStrategy struct {
	// Steps are the release steps, in order.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Steps []CanaryStep `json:"steps,omitempty"`

	// TrafficRoutings lists the Services and routes whose traffic is shifted.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	TrafficRoutings []TrafficRoutingRef `json:"trafficRoutings,omitempty"`

	// FailureThreshold is how many updated pods of a step may be unready for
	// the step to count as done. Unset means none, as OpenKruise behaves;
	// the Rollout annotation sluice.dev/failure-threshold-default:
	// maxUnavailable makes it the workload's own maxUnavailable.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="failureThreshold must be a non-negative integer or a percentage between 0% and 100%"
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`

	// TrafficRoutingRef names a TrafficRouting object whose routes this
	// Rollout shares.
	// +optional
	TrafficRoutingRef string `json:"trafficRoutingRef,omitempty"`

	// DisableGenerateCanaryService uses the stable Service for the new
	// revision instead of generating a <service>-canary Service.
	// +optional
	DisableGenerateCanaryService bool `json:"disableGenerateCanaryService,omitempty"`
}

// CanaryStep is one step of a release.
type CanaryStep struct {
	TrafficRoutingStrategy `json:",inline"`

	// Replicas is how many pods run the new revision once this step is done,
	// counted from the start of the release: an absolute number, or a
	// percentage of the workload's replicas rounded up.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : self.matches('^(100|[1-9][0-9]?)%$')",message="replicas must be a positive integer or a percentage in (0%, 100%]"
	Replicas *intstr.IntOrString `json:"replicas,omitempty"`

	// Pause says how the step waits once it is done: without a duration until
	// it is approved, with one for that many seconds.
	// +optional
	Pause RolloutPause `json:"pause,omitempty"`
}

// TrafficRoutingStrategy is the traffic part of a step.
type TrafficRoutingStrategy struct {
	// Traffic is the share of traffic sent to the new revision, e.g. "20%".
	// +optional
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	Traffic *string `json:"traffic,omitempty"`

	// RequestHeaderModifier changes the headers of requests routed to the new
	// revision.
	// +optional
	RequestHeaderModifier *HTTPHeaderFilter `json:"requestHeaderModifier,omitempty"`

	// Matches send the requests they match to the new revision (A/B testing).
	// Matches are ORed; the conditions inside one match are ANDed.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Matches []HttpRouteMatch `json:"matches,omitempty"`
}

// HttpRouteMatch selects requests by path, headers and query parameters.
//
//nolint:revive // The name is part of the OpenKruise Rollouts API.
type HttpRouteMatch struct {
	// Path matches the request path.
	// +optional
	Path *HTTPPathMatch `json:"path,omitempty"`

	// Headers match request headers; all must match.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Headers []HTTPHeaderMatch `json:"headers,omitempty"`

	// QueryParams match query parameters; all must match.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	QueryParams []HTTPQueryParamMatch `json:"queryParams,omitempty"`
}

// RolloutPause says how a step waits once it is done.
type RolloutPause struct {
	// Duration is how many seconds to wait before the next step. Unset waits
	// until the step is approved; 0 continues at once.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Duration *int32 `json:"duration,omitempty"`
}

// PatchPodTemplateMetadata holds labels and annotations added to the pod
// template of an extra canary workload.
type PatchPodTemplateMetadata struct {
	// Annotations are added to the canary pod template.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels are added to the canary pod template.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
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
	Ingress *IngressTrafficRouting `json:"ingress,omitempty"`

	// Gateway routes through a Gateway API route.
	// +optional
	Gateway *GatewayTrafficRouting `json:"gateway,omitempty"`

	// CustomNetworkRefs route through other resources, changed by Lua
	// scripts.
	// +optional
	CustomNetworkRefs []ObjectRef `json:"customNetworkRefs,omitempty"`
}

// IngressTrafficRouting names the Ingress that carries the stable traffic.
type IngressTrafficRouting struct {
	// ClassType is the Ingress implementation: nginx (default), aliyun-alb,
	// higress or mse.
	// +optional
	ClassType string `json:"classType,omitempty"`

	// Name is the name of the Ingress.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// GatewayTrafficRouting names the Gateway API route that carries the stable
// traffic.
type GatewayTrafficRouting struct {
	// HTTPRouteName is the name of the HTTPRoute.
	// +optional
	HTTPRouteName *string `json:"httpRouteName,omitempty"`
}

// RolloutStatus is the observed state of a Rollout.
type RolloutStatus struct {
	// ObservedGeneration is the Rollout generation this status is based on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// CanaryStatus is the progress of a canary release.
	// +optional
	CanaryStatus *CanaryStatus `json:"canaryStatus,omitempty"`

	// BlueGreenStatus is the progress of a blue-green release.
	// +optional
	BlueGreenStatus *BlueGreenStatus `json:"blueGreenStatus,omitempty"`

	// Conditions are the Rollout's conditions: Progressing, Succeeded,
	// Terminating and Supported.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []RolloutCondition `json:"conditions,omitempty"`

	// Phase is the Rollout's phase.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`

	// Message says what the Rollout is doing or waiting for.
	// +optional
	Message string `json:"message,omitempty"`

	// CurrentStepIndex mirrors the current step of the canary or blue-green
	// status, for printing.
	// +optional
	CurrentStepIndex int32 `json:"currentStepIndex,omitempty"`

	// CurrentStepState mirrors the current step state of the canary or
	// blue-green status, for printing.
	// +optional
	CurrentStepState CanaryStepState `json:"currentStepState,omitempty"`

	// Aborted records an aborted release (a sluice extension; OpenKruise
	// has no abort): who aborted it, how, when and at which step. It is set
	// from the abort until the release it aborted ends: while the phase is
	// Aborted, and while a pod template set back to the stable revision
	// completes the rollback.
	// +optional
	Aborted *AbortStatus `json:"aborted,omitempty"`
}

// AbortStatus records an aborted release.
type AbortStatus struct {
	// Revision is the canary revision whose release was aborted.
	// +required
	Revision string `json:"revision"`

	// StableRevision is the revision every pod is held on.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`

	// Step is the step the release was at when it was aborted, from 1.
	// +optional
	Step int32 `json:"step,omitempty"`

	// StepState is the state of that step when it was aborted.
	// +optional
	StepState CanaryStepState `json:"stepState,omitempty"`

	// By is who aborted it: the user the API server authenticated, or the
	// person a GitOps intent names.
	// +optional
	By string `json:"by,omitempty"`

	// Via is how it was aborted: annotation, kubectl-sluice, github-label,
	// git-revert, git-trailer.
	// +optional
	Via string `json:"via,omitempty"`

	// At is when the abort was asked for, to the microsecond: a retry
	// applies only when it is newer.
	// +optional
	At *metav1.MicroTime `json:"at,omitempty"`

	// Reason says why, in the words of whoever aborted it.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Commit is the Git commit the abort came from (a revert, or the commit
	// of a trailer), when it came from Git.
	// +optional
	Commit string `json:"commit,omitempty"`

	// PullRequest is the number of the pull request the abort came from (a
	// label), when it came from one.
	// +optional
	PullRequest int32 `json:"pullRequest,omitempty"`

	// Held is true once every pod runs the stable revision and all traffic
	// goes to it.
	// +optional
	Held bool `json:"held,omitempty"`
}

// RolloutCondition is one condition of a Rollout or BatchRelease.
type RolloutCondition struct {
	// Type is the kind of condition.
	// +required
	Type RolloutConditionType `json:"type"`

	// Status is True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`

	// LastUpdateTime is when the condition was last written.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`

	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason is a CamelCase reason for the last transition.
	// +optional
	Reason string `json:"reason"`

	// Message explains the condition to a person.
	// +optional
	Message string `json:"message"`
}

// CommonStatus is the progress shared by canary and blue-green releases.
type CommonStatus struct {
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

	// PodTemplateHash is the pod-template-hash of the new revision's pods.
	// +optional
	PodTemplateHash string `json:"podTemplateHash"`

	// CurrentStepIndex is the current step, counted from 1.
	// +optional
	CurrentStepIndex int32 `json:"currentStepIndex"`

	// NextStepIndex is the step that follows the current one; users may set
	// it to jump. -1 when there is none.
	// +optional
	NextStepIndex int32 `json:"nextStepIndex"`

	// FinalisingStep is the finishing action in progress.
	// +optional
	FinalisingStep FinalisingStepType `json:"finalisingStep"`

	// CurrentStepState is the state of the current step; users set it to
	// StepReady to approve a paused step.
	// +optional
	CurrentStepState CanaryStepState `json:"currentStepState"`

	// Message says what the release is doing.
	// +optional
	Message string `json:"message,omitempty"`

	// LastUpdateTime is when the step state last changed; timed pauses count
	// from it.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
}

// CanaryStatus is the progress of a canary release.
type CanaryStatus struct {
	CommonStatus `json:",inline"`

	// CanaryRevision is the revision being released.
	// +optional
	CanaryRevision string `json:"canaryRevision"`

	// CanaryReplicas is how many pods run the new revision.
	// +optional
	CanaryReplicas int32 `json:"canaryReplicas"`

	// CanaryReadyReplicas is how many pods of the new revision are ready.
	// +optional
	CanaryReadyReplicas int32 `json:"canaryReadyReplicas"`
}

// BlueGreenStatus is the progress of a blue-green release.
type BlueGreenStatus struct {
	CommonStatus `json:",inline"`

	// UpdatedRevision is the revision being released.
	// +optional
	UpdatedRevision string `json:"updatedRevision"`

	// UpdatedReplicas is how many pods run the new revision.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is how many pods of the new revision are ready.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas"`
}
