package v1beta1

// Labels, annotations and finalizers shared with OpenKruise Rollouts.
const (
	// RolloutFinalizer is the finalizer on a Rollout that restores its
	// workload before the Rollout goes away.
	RolloutFinalizer = "rollouts.kruise.io/rollout"

	// BatchReleaseFinalizer is the finalizer on a BatchRelease that hands its
	// workload back before the BatchRelease goes away.
	BatchReleaseFinalizer = "rollouts.kruise.io/batch-release-finalizer"

	// WorkloadTypeLabel marks a workload under a Rollout, so that the
	// admission webhook sees its updates: deployment, statefulset, cloneset or
	// daemonset.
	WorkloadTypeLabel = "rollouts.kruise.io/workload-type"

	// RolloutIDLabel names one release of a workload. When it changes, a
	// release starts even if the pod template did not change. sluice reads it
	// as a label and as an annotation; the annotation wins.
	RolloutIDLabel = "rollouts.kruise.io/rollout-id"

	// InProgressingAnnotation marks a workload being released; its value is
	// {"rolloutName":"<name>"}.
	InProgressingAnnotation = "rollouts.kruise.io/in-progressing"

	// RolloutHashAnnotation holds the hash of a Rollout's strategy; when it
	// differs from status.canaryStatus.rolloutHash the release is re-planned.
	RolloutHashAnnotation = "rollouts.kruise.io/hash"

	// RollbackInBatchAnnotation on a Rollout asks for a rollback to go
	// through the steps instead of happening at once.
	RollbackInBatchAnnotation = "rollouts.kruise.io/rollback-in-batch"

	// RollingStyleAnnotation is the v1alpha1 way to choose canary or
	// partition style.
	RollingStyleAnnotation = "rollouts.kruise.io/rolling-style"

	// TrafficRoutingAnnotation names a shared TrafficRouting (v1alpha1 form
	// of spec.strategy.canary.trafficRoutingRef).
	TrafficRoutingAnnotation = "rollouts.kruise.io/trafficrouting"

	// ControlInfoAnnotation on a workload records the BatchRelease that
	// controls it.
	ControlInfoAnnotation = "batchrelease.rollouts.kruise.io/control-info"

	// StableRevisionLabel on a Deployment records the pod-template-hash of the
	// revision being replaced.
	StableRevisionLabel = "rollouts.kruise.io/stable-revision"

	// RolloutBatchIDLabel on a pod names the batch that updated it, from 1.
	RolloutBatchIDLabel = "rollouts.kruise.io/rollout-batch-id"
)

// Workload type label values.
const (
	// WorkloadTypeDeployment marks a Deployment.
	WorkloadTypeDeployment = "deployment"
	// WorkloadTypeStatefulSet marks a StatefulSet or a StatefulSet-like kind.
	WorkloadTypeStatefulSet = "statefulset"
	// WorkloadTypeCloneSet marks an OpenKruise CloneSet.
	WorkloadTypeCloneSet = "cloneset"
	// WorkloadTypeDaemonSet marks a DaemonSet.
	WorkloadTypeDaemonSet = "daemonset"
)

// Annotations of sluice's own, where the OpenKruise API has no field.
const (
	// ApproveAnnotation on a Rollout approves the paused steps of one
	// revision up to a step. Its value is the step ("2"), "step=2,revision=
	// <canary revision>", or JSON {"step":2,"revision":"..."}. Without a
	// revision it applies to the revision being released when it was
	// written. sluice never rewrites it, so it can live in Git.
	ApproveAnnotation = "sluice.dev/approve"

	// ApproveContextAnnotation is written by sluice's admission webhook
	// whenever sluice.dev/approve changes: who wrote it (as the API server
	// authenticated them), when, and the revision being released then. Values
	// written by anyone else are discarded.
	ApproveContextAnnotation = "sluice.dev/approve-context"

	// AbortAnnotation on a Rollout asks sluice to abort the release of one
	// revision: every pod and all traffic go back to the stable revision and
	// stay there, without the pod template changing, until the template
	// changes or the release is retried. Its value is JSON
	// {"revision":"<canary revision>","by":"...","via":"...","at":"...",
	// "reason":"...","commit":"...","pullRequest":N}, or a short form a
	// person writes: "true" (the revision being released when it was
	// written) or the canary revision itself. The admission webhook records
	// who wrote it in AbortContextAnnotation. A value naming another
	// revision aborts nothing. sluice never rewrites it, so it can live in
	// Git.
	AbortAnnotation = "sluice.dev/abort"

	// AbortContextAnnotation is written by sluice's admission webhook
	// whenever sluice.dev/abort changes: who wrote it, when, and the
	// revision being released then. Values written by anyone else are
	// discarded.
	AbortContextAnnotation = "sluice.dev/abort-context"

	// RetryAnnotation on a Rollout asks sluice to release an aborted
	// revision again from step 1. Its value has the forms of
	// AbortAnnotation ("true" names the aborted revision); it applies only
	// to an abort older than it.
	RetryAnnotation = "sluice.dev/retry"

	// RetryContextAnnotation is written by sluice's admission webhook
	// whenever sluice.dev/retry changes, as AbortContextAnnotation is.
	RetryContextAnnotation = "sluice.dev/retry-context"

	// ApprovalsAnnotation on a Rollout lists the approvals sluice applied,
	// newest last, as JSON; it keeps the 20 newest, across releases.
	ApprovalsAnnotation = "sluice.dev/approvals"

	// DeploymentOriginalAnnotation on a Deployment holds, while a release is
	// in progress, a JSON merge patch that restores every field sluice
	// changed. Applying it by hand hands the Deployment back to Kubernetes:
	//
	//	kubectl patch deployment NAME --type merge \
	//	  -p "$(kubectl get deployment NAME -o jsonpath='{.metadata.annotations.sluice\.dev/restore-patch}')"
	DeploymentOriginalAnnotation = "sluice.dev/restore-patch"

	// ProgressDeadlineAnnotation on a Rollout is how long a step may take to
	// get its pods ready before the Rollout reports Stalled, as a Go
	// duration ("10m", "90s"); "0" waits forever. Without it the manager's
	// --progress-deadline applies (default 10m).
	ProgressDeadlineAnnotation = "sluice.dev/progress-deadline"

	// KeepHeldOnDeletionAnnotation set to "true" on a Rollout keeps its
	// workload held (paused, or partitioned) when the Rollout is deleted
	// mid-release, instead of handing it back so its own controller
	// finishes the rollout. The workload keeps its restore patch for
	// handing it back by hand. The manager's
	// --keep-workload-held-on-deletion sets the default for all Rollouts.
	KeepHeldOnDeletionAnnotation = "sluice.dev/keep-workload-held-on-deletion"

	// FailureThresholdDefaultAnnotation on a Rollout (copied onto its
	// BatchRelease, where it is read) chooses what an unset failureThreshold
	// tolerates. Without it an unset failureThreshold tolerates no unready
	// pod, as OpenKruise behaves; FailureThresholdDefaultMaxUnavailable
	// opts in to the reading the OpenKruise API documents: the workload's
	// own maxUnavailable.
	FailureThresholdDefaultAnnotation = "sluice.dev/failure-threshold-default"

	// FailureThresholdDefaultMaxUnavailable is the value of
	// FailureThresholdDefaultAnnotation that makes an unset failureThreshold
	// tolerate the workload's own maxUnavailable.
	FailureThresholdDefaultMaxUnavailable = "maxUnavailable"

	// SkipHandBackAnnotation on a BatchRelease being deleted makes it leave
	// its workload as it is instead of handing it back; the Rollout
	// controller sets it for KeepHeldOnDeletionAnnotation.
	SkipHandBackAnnotation = "sluice.dev/skip-hand-back"

	// FieldManager is the field manager of every write sluice makes.
	FieldManager = "sluice"
)
