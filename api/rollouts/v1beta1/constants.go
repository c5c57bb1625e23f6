package v1beta1

// RolloutPhase is the phase of a Rollout.
type RolloutPhase string

// The phases of a Rollout, as in OpenKruise Rollouts.
const (
	// RolloutPhaseInitial is a Rollout whose workload is not known yet.
	RolloutPhaseInitial RolloutPhase = "Initial"
	// RolloutPhaseHealthy is a Rollout with no release in progress.
	RolloutPhaseHealthy RolloutPhase = "Healthy"
	// RolloutPhaseProgressing is a Rollout releasing a new revision.
	RolloutPhaseProgressing RolloutPhase = "Progressing"
	// RolloutPhaseTerminating is a Rollout being deleted.
	RolloutPhaseTerminating RolloutPhase = "Terminating"
	// RolloutPhaseDisabling is a disabled Rollout finishing its release.
	RolloutPhaseDisabling RolloutPhase = "Disabling"
	// RolloutPhaseDisabled is a disabled Rollout.
	RolloutPhaseDisabled RolloutPhase = "Disabled"
	// RolloutPhaseAborted is a Rollout whose release was aborted (a sluice
	// extension; OpenKruise has no abort): every pod and all traffic are
	// held on the stable revision, whatever the pod template says, until
	// the template changes or the release is retried. status.aborted says
	// who aborted it, how and at which step.
	RolloutPhaseAborted RolloutPhase = "Aborted"
)

// CanaryStepState is the state of the current step of a release.
type CanaryStepState string

// The states of a step, in the order a step goes through them.
const (
	// CanaryStepStateInit is a step about to start. It is a v1alpha1 spelling
	// kept for compatibility; sluice writes BeforeStepUpgrade.
	CanaryStepStateInit CanaryStepState = "StepInit"
	// CanaryStepStateBeforeUpgrade is a step about to update pods.
	CanaryStepStateBeforeUpgrade CanaryStepState = "BeforeStepUpgrade"
	// CanaryStepStateUpgrade is a step updating pods.
	CanaryStepStateUpgrade CanaryStepState = "StepUpgrade"
	// CanaryStepStateTrafficRouting is a step shifting traffic.
	CanaryStepStateTrafficRouting CanaryStepState = "StepTrafficRouting"
	// CanaryStepStateMetricsAnalysis is a step checking metrics.
	CanaryStepStateMetricsAnalysis CanaryStepState = "StepMetricsAnalysis"
	// CanaryStepStatePaused is a step waiting for approval or its pause.
	CanaryStepStatePaused CanaryStepState = "StepPaused"
	// CanaryStepStateReady is a step that may go on to the next one.
	CanaryStepStateReady CanaryStepState = "StepReady"
	// CanaryStepStateCompleted is a release whose steps are all done.
	CanaryStepStateCompleted CanaryStepState = "Completed"
)

// RolloutConditionType is the type of a Rollout or BatchRelease condition.
type RolloutConditionType string

// The condition types of a Rollout.
const (
	// RolloutConditionProgressing tracks a release: its reason is one of the
	// ProgressingReason constants.
	RolloutConditionProgressing RolloutConditionType = "Progressing"
	// RolloutConditionSucceeded is True after a release completed and False
	// after one was cancelled or rolled back.
	RolloutConditionSucceeded RolloutConditionType = "Succeeded"
	// RolloutConditionTerminating tracks the deletion of a Rollout.
	RolloutConditionTerminating RolloutConditionType = "Terminating"
	// RolloutConditionSupported is False when the Rollout uses fields or a
	// workload kind this version of sluice does not implement; its message
	// names them. Such fields are stored but have no effect.
	RolloutConditionSupported RolloutConditionType = "Supported"
	// RolloutConditionStalled is True when the current step's pods did not
	// become ready within the progress deadline; its message names them.
	// The release keeps waiting (it does not roll back by itself) and the
	// condition turns False once the step is ready.
	RolloutConditionStalled RolloutConditionType = "Stalled"
	// RolloutConditionReconcileError is True while sluice's last reconcile
	// of the Rollout failed (sluice extension): its reason names the phase
	// (Observe, Traffic, Step, Act) and its message the error. The
	// generation is not counted as observed meanwhile, and the condition is
	// removed once a reconcile succeeds.
	RolloutConditionReconcileError RolloutConditionType = "ReconcileError"
)

// The reasons of the Progressing condition.
const (
	// ProgressingReasonInitializing is a release being set up.
	ProgressingReasonInitializing = "Initializing"
	// ProgressingReasonInRolling is a release going through its steps.
	ProgressingReasonInRolling = "InRolling"
	// ProgressingReasonFinalising is a successful release being cleaned up.
	ProgressingReasonFinalising = "Finalising"
	// ProgressingReasonCompleted is a release that is over.
	ProgressingReasonCompleted = "Completed"
	// ProgressingReasonCancelling is a release being rolled back or disabled.
	ProgressingReasonCancelling = "Cancelling"
	// ProgressingReasonPaused is a release frozen by spec.strategy.paused.
	ProgressingReasonPaused = "Paused"
	// ProgressingReasonAborting is an aborted release moving every pod and
	// all traffic back to the stable revision (sluice extension).
	ProgressingReasonAborting = "Aborting"
	// ProgressingReasonAborted is an aborted release held on the stable
	// revision (sluice extension); the condition is False.
	ProgressingReasonAborted = "Aborted"
)

// The reasons of the Terminating condition.
const (
	// TerminatingReasonInTerminating is a Rollout being cleaned up.
	TerminatingReasonInTerminating = "InTerminating"
	// TerminatingReasonCompleted is a Rollout ready to go.
	TerminatingReasonCompleted = "Completed"
)

// FinalisingStepType is a finishing action of a release.
type FinalisingStepType string

// The finishing actions of a release.
const (
	// FinalisingStepRestoreStableService restores the stable Service selector.
	FinalisingStepRestoreStableService FinalisingStepType = "RestoreStableService"
	// FinalisingStepRouteTrafficToStable sends all traffic to the stable pods.
	FinalisingStepRouteTrafficToStable FinalisingStepType = "FinalisingStepRouteTrafficToStable"
	// FinalisingStepRouteTrafficToNew sends all traffic to the new pods.
	FinalisingStepRouteTrafficToNew FinalisingStepType = "FinalisingStepRouteTrafficToNew"
	// FinalisingStepRemoveCanaryService deletes the canary Service.
	FinalisingStepRemoveCanaryService FinalisingStepType = "RemoveCanaryService"
	// FinalisingStepResumeWorkload hands the workload back to its controller.
	FinalisingStepResumeWorkload FinalisingStepType = "ResumeWorkload"
	// FinalisingStepReleaseWorkloadControl deletes the BatchRelease.
	FinalisingStepReleaseWorkloadControl FinalisingStepType = "ReleaseWorkloadControl"
	// FinalisingStepEnd is a finished release.
	FinalisingStepEnd FinalisingStepType = "END"
)

// FinaliseReason says why a release is being finished.
type FinaliseReason string

// The reasons a release is finished.
const (
	// FinaliseReasonSuccess is a release whose steps are all done.
	FinaliseReasonSuccess FinaliseReason = "Success"
	// FinaliseReasonRollback is a release whose template went back to stable.
	FinaliseReasonRollback FinaliseReason = "Rollback"
	// FinaliseReasonDisabled is a release of a Rollout that was disabled.
	FinaliseReasonDisabled FinaliseReason = "RolloutDisabled"
	// FinaliseReasonDeleting is a release of a Rollout being deleted.
	FinaliseReasonDeleting FinaliseReason = "RolloutDeleting"
)
