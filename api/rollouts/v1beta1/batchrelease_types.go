package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BatchRelease releases a workload's new revision in batches. A Rollout
// creates one with its own name for each release and moves its
// batchPartition forward step by step; it can also be used on its own.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="KIND",type="string",JSONPath=".spec.workloadRef.kind",description="The kind of the workload."
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="The release phase."
// +kubebuilder:printcolumn:name="BATCH",type="integer",JSONPath=".status.canaryStatus.currentBatch",description="The current batch, from 0."
// +kubebuilder:printcolumn:name="BATCH-STATE",type="string",JSONPath=".status.canaryStatus.batchState",description="The state of the current batch."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type BatchRelease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the release plan.
	// +required
	Spec BatchReleaseSpec `json:"spec"`

	// Status is the progress of the plan.
	// +optional
	Status BatchReleaseStatus `json:"status,omitempty"`
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
	// WorkloadRef names the workload, in the BatchRelease's namespace.
	// +optional
	WorkloadRef ObjectRef `json:"workloadRef,omitempty"`

	// ReleasePlan is the list of batches and how far to go.
	// +required
	ReleasePlan ReleasePlan `json:"releasePlan"`
}

// ReleasePlan is the list of batches of a release and how far to go.
type ReleasePlan struct {
	// Batches are the batches, in order.
	// +required
	// +kubebuilder:validation:MaxItems=50
	Batches []ReleaseBatch `json:"batches"`

	// BatchPartition is the last batch to release, from 0. Unset releases
	// everything and hands the workload back.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BatchPartition *int32 `json:"batchPartition,omitempty"`

	// RolloutID names this release; when it changes the release restarts.
	// +optional
	RolloutID string `json:"rolloutID,omitempty"`

	// FailureThreshold is how many updated pods of a batch may be unready for
	// the batch to count as done. Unset means none, as OpenKruise behaves;
	// the BatchRelease annotation sluice.dev/failure-threshold-default:
	// maxUnavailable makes it the workload's own maxUnavailable.
	// +optional
	// +kubebuilder:validation:XIntOrString
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`

	// FinalizingPolicy says whether finishing waits for the workload to be
	// fully updated (WaitResume) or hands it back at once (Immediate).
	// +optional
	// +kubebuilder:validation:Enum=WaitResume;Immediate
	FinalizingPolicy FinalizingPolicyType `json:"finalizingPolicy,omitempty"`

	// PatchPodTemplateMetadata adds labels and annotations to the pod template
	// of an extra canary workload.
	// +optional
	PatchPodTemplateMetadata *PatchPodTemplateMetadata `json:"patchPodTemplateMetadata,omitempty"`

	// RollingStyle is Partition (in place), Canary (extra workload) or
	// BlueGreen.
	// +optional
	// +kubebuilder:validation:Enum="";Partition;Canary;BlueGreen
	RollingStyle RollingStyleType `json:"rollingStyle,omitempty"`

	// EnableExtraWorkloadForCanary is the older way to choose Canary style;
	// it is read only when rollingStyle is empty.
	// +optional
	EnableExtraWorkloadForCanary bool `json:"enableExtraWorkloadForCanary"`

	// HoldStable (a sluice extension; OpenKruise has none) moves every pod
	// back to the stable revision and keeps the workload held there,
	// without changing its pod template: what an aborted release needs.
	// Batches and partition are kept; when it is unset again the plan
	// restarts at batch 0. status.stableHold reports how far it got.
	// +optional
	HoldStable bool `json:"holdStable,omitempty"`
}

// ReleaseBatch is one batch of a release.
type ReleaseBatch struct {
	// CanaryReplicas is how many pods run the new revision once the batch is
	// done: a number or a percentage of the workload's replicas.
	// +required
	// +kubebuilder:validation:XIntOrString
	CanaryReplicas intstr.IntOrString `json:"canaryReplicas"`
}

// FinalizingPolicyType says how a BatchRelease hands its workload back.
type FinalizingPolicyType string

// The finalizing policies.
const (
	// WaitResumeFinalizingPolicy waits until the workload is fully updated.
	WaitResumeFinalizingPolicy FinalizingPolicyType = "WaitResume"
	// ImmediateFinalizingPolicy hands the workload back at once.
	ImmediateFinalizingPolicy FinalizingPolicyType = "Immediate"
)

// RollingStyleType is how new-revision pods are produced.
type RollingStyleType string

// The rolling styles.
const (
	// PartitionRollingStyle updates the workload's pods in place.
	PartitionRollingStyle RollingStyleType = "Partition"
	// CanaryRollingStyle runs the new revision in an extra workload.
	CanaryRollingStyle RollingStyleType = "Canary"
	// BlueGreenRollingStyle runs both revisions side by side.
	BlueGreenRollingStyle RollingStyleType = "BlueGreen"
)

// BatchReleaseStatus is the progress of a BatchRelease.
type BatchReleaseStatus struct {
	// Conditions are the BatchRelease's conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []RolloutCondition `json:"conditions,omitempty"`

	// CanaryStatus is the progress of the current batch.
	// +optional
	CanaryStatus BatchReleaseCanaryStatus `json:"canaryStatus,omitempty"`

	// StableRevision is the revision being replaced.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`

	// UpdateRevision is the revision being released.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// ObservedGeneration is the BatchRelease generation this status is based
	// on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ObservedRolloutID is the rolloutID this status is based on.
	// +optional
	ObservedRolloutID string `json:"observedRolloutID,omitempty"`

	// ObservedWorkloadReplicas is the workload's replicas the current batch
	// was planned for; -1 when unknown.
	// +optional
	ObservedWorkloadReplicas int32 `json:"observedWorkloadReplicas,omitempty"`

	// CollisionCount counts name collisions of extra canary workloads.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// ObservedReleasePlanHash is the hash of the plan this status is based on.
	// +optional
	ObservedReleasePlanHash string `json:"observedReleasePlanHash,omitempty"`

	// Phase is Preparing, Progressing, Finalizing or Completed.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`

	// Message says what the BatchRelease is doing or what went wrong.
	// +optional
	Message string `json:"message,omitempty"`

	// StableHold reports the hold spec.releasePlan.holdStable asks for (a
	// sluice extension): Holding while pods still run other revisions,
	// Held once every pod runs the stable revision and is ready, Blocked
	// when the workload's kind cannot run the stable revision again without
	// its pod template changing (the message says why and what to do).
	// Empty when not holding.
	// +optional
	// +kubebuilder:validation:Enum="";Holding;Held;Blocked
	StableHold StableHoldState `json:"stableHold,omitempty"`
}

// StableHoldState is how far a BatchRelease got holding its workload on
// the stable revision.
type StableHoldState string

// The states of a stable hold.
const (
	// StableHoldHolding is a hold moving pods back to the stable revision.
	StableHoldHolding StableHoldState = "Holding"
	// StableHoldHeld is a hold done: every pod runs the stable revision
	// and is ready.
	StableHoldHeld StableHoldState = "Held"
	// StableHoldBlocked is a hold the workload's kind cannot carry out
	// without its pod template changing; nothing further is released.
	StableHoldBlocked StableHoldState = "Blocked"
)

// BatchReleaseCanaryStatus is the progress of the current batch.
type BatchReleaseCanaryStatus struct {
	// CurrentBatchState is Upgrading, Verifying or Ready.
	// +optional
	CurrentBatchState BatchReleaseBatchStateType `json:"batchState,omitempty"`

	// CurrentBatch is the current batch, from 0.
	// +optional
	CurrentBatch int32 `json:"currentBatch"`

	// BatchReadyTime is when the current batch became ready.
	// +optional
	BatchReadyTime *metav1.Time `json:"batchReadyTime,omitempty"`

	// UpdatedReplicas is how many pods run the new revision.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// UpdatedReadyReplicas is how many pods of the new revision are ready.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`

	// NoNeedUpdateReplicas is how many pods already run the rollback target.
	// +optional
	NoNeedUpdateReplicas *int32 `json:"noNeedUpdateReplicas,omitempty"`
}

// BatchReleaseBatchStateType is the state of a batch.
type BatchReleaseBatchStateType string

// The states of a batch.
const (
	// UpgradingBatchState is a batch updating pods.
	UpgradingBatchState BatchReleaseBatchStateType = "Upgrading"
	// VerifyingBatchState is a batch waiting for its pods to be ready.
	VerifyingBatchState BatchReleaseBatchStateType = "Verifying"
	// ReadyBatchState is a batch whose pods are updated and ready.
	ReadyBatchState BatchReleaseBatchStateType = "Ready"
)

// The phases of a BatchRelease.
const (
	// BatchReleasePhasePreparing is a BatchRelease taking control of its
	// workload.
	BatchReleasePhasePreparing RolloutPhase = "Preparing"
	// BatchReleasePhaseFinalizing is a BatchRelease handing its workload back.
	BatchReleasePhaseFinalizing RolloutPhase = "Finalizing"
	// BatchReleasePhaseCompleted is a BatchRelease that is done.
	BatchReleasePhaseCompleted RolloutPhase = "Completed"
)
