// Package canary is the pure step machine of a Rollout's release (canary,
// multi-batch or blue-green): given the Rollout and what the controller
// observed, it returns the next status and the actions to take. It reads and
// writes the release through release/progress, whichever status field holds
// it. It reads no clients and no clocks.
package canary

import (
	"time"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/workload"
)

// Observation is what the controller saw before calling Next.
type Observation struct {
	// Now is the reconcile time.
	Now time.Time
	// Deleting is true when the Rollout has a deletion timestamp.
	Deleting bool
	// Workload is the workload's status; nil when it does not exist.
	Workload *workload.Status
	// BatchRelease is the Rollout's BatchRelease; nil when there is none.
	BatchRelease *BatchReleaseView
	// Blocking lists settings that keep this version of sluice from
	// releasing the workload at all (e.g. an unsupported kind).
	Blocking []string
	// Waiting says why a new release may not start yet although sluice can
	// release the workload (a TrafficRouting the Rollout names does not
	// exist yet): the update stays held until it can.
	Waiting string
	// Ignored lists settings that are stored but have no effect yet.
	Ignored []string
	// Approval is the parsed sluice.dev/approve annotation, if any.
	Approval *approval.Approval
	// Abort is the resolved sluice.dev/abort annotation, if any.
	Abort *abort.Request
	// Retry is the resolved sluice.dev/retry annotation, if any.
	Retry *abort.Request
	// ProgressDeadline is how long a step may take to get its pods ready
	// before the Rollout reports Stalled; 0 waits forever.
	ProgressDeadline time.Duration
	// UnreadyPods describes the new revision's pods that are not ready
	// ("name (reason)"); the controller fills it once a step is past its
	// progress deadline.
	UnreadyPods []string
	// KeepHeldOnDeletion keeps the workload held when the Rollout is
	// deleted mid-release.
	KeepHeldOnDeletion bool
	// StatusApprover names who set currentStepState to StepReady through
	// the status subresource (kubectl-kruise rollout approve), from the
	// field manager that owns it; empty when unknown.
	StatusApprover string
	// Traffic is what the controller saw of the Rollout's Services and
	// routes; nil when it has none to drive.
	Traffic *TrafficObservation
	// Analysis is what the MetricGates bound to the Rollout say about its
	// release at the current step, as read before this call
	// (analysis/stepgate); nil when no gate binds it.
	Analysis *stepgate.Decision
	// AbortOnProgressDeadline: a step whose pods are not ready within the
	// progress deadline aborts the release as well as reporting Stalled
	// (sluice.dev/on-progress-deadline: abort).
	AbortOnProgressDeadline bool
}

// BatchReleaseView is the part of a BatchRelease the machine reads.
type BatchReleaseView struct {
	// Partition is spec.releasePlan.batchPartition.
	Partition *int32
	// Policy is spec.releasePlan.finalizingPolicy.
	Policy rolloutsv1beta1.FinalizingPolicyType
	// RolloutID is spec.releasePlan.rolloutID: the release the plan is for.
	RolloutID string
	// Generation and ObservedGeneration of the BatchRelease.
	Generation, ObservedGeneration int64
	// Phase, CurrentBatch and BatchState from its status.
	Phase        rolloutsv1beta1.RolloutPhase
	CurrentBatch int32
	BatchState   rolloutsv1beta1.BatchReleaseBatchStateType
	// UpdateRevision is the revision the BatchRelease is releasing.
	UpdateRevision string
	// StableRevision is the revision the BatchRelease recorded as stable.
	StableRevision string
	// Deleting is true when it has a deletion timestamp.
	Deleting bool
	// SkipHandBack is true when, deleted, it leaves the workload held
	// (sluice.dev/skip-hand-back) instead of handing it back.
	SkipHandBack bool
	// HoldStable is spec.releasePlan.holdStable.
	HoldStable bool
	// StableHold is status.stableHold, and Message status.message.
	StableHold rolloutsv1beta1.StableHoldState
	Message    string
}

// caughtUp reports whether the BatchRelease's status reflects its spec.
func (b *BatchReleaseView) caughtUp() bool {
	return b != nil && b.ObservedGeneration >= b.Generation
}

// BatchReleaseAction says what to do with the Rollout's BatchRelease.
type BatchReleaseAction int

// The BatchRelease actions.
const (
	// KeepBatchRelease leaves it as it is.
	KeepBatchRelease BatchReleaseAction = iota
	// EnsureBatchRelease creates or updates it with Partition and Policy.
	EnsureBatchRelease
	// DeleteBatchRelease deletes it.
	DeleteBatchRelease
)

// Event is a Kubernetes event to record on the Rollout.
type Event struct {
	// Type is Normal or Warning.
	Type string
	// Reason is a CamelCase reason, equal to a condition reason.
	Reason string
	// Message says what happened.
	Message string
	// Once marks a refusal the machine reports on every call while its
	// cause lasts: the controller records it once per Rollout.
	Once bool
}

// Actions are what the controller carries out after Next.
type Actions struct {
	// BatchRelease says what to do with the BatchRelease.
	BatchRelease BatchReleaseAction
	// Partition is the batchPartition to ensure (nil releases everything).
	Partition *int32
	// Policy is the finalizingPolicy to ensure.
	Policy rolloutsv1beta1.FinalizingPolicyType
	// HoldStable is the holdStable to ensure: every pod back on the stable
	// revision, for an aborted release.
	HoldStable bool
	// SkipHandBack marks the BatchRelease to be deleted so that it leaves the
	// workload held.
	SkipHandBack bool
	// HandBack asks the controller to hand the workload back directly
	// (there is no BatchRelease to do it), e.g. a paused workload whose
	// release never started.
	HandBack bool
	// RemoveFinalizer is set once a deleted Rollout left everything
	// restored.
	RemoveFinalizer bool
	// Approved is an approval (or an abort or retry) that was applied and
	// must be recorded.
	Approved *approval.Approval
	// Events to record.
	Events []Event
	// RequeueAfter asks for another look after this long (a timed pause).
	RequeueAfter time.Duration
}
