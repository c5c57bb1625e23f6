// Package killpoint names the points of the manager at which the restart
// and chaos tests kill it: right after a write to the workload or the
// routes, and before the status that records it. Each point is one call in
// the code that makes the write.
//
// In the manager as shipped every call does nothing (the default build). A
// binary built with the build tag sluicetest blocks at a point named by the
// environment, forever, so that a test can kill it there with SIGKILL
// knowing exactly what was and was not written:
//
//	SLUICE_KILLPOINT=<point>[,<point>]  the points to block at (Point values)
//	SLUICE_KILLPOINT_NAMESPACE=<ns>     only for objects in this namespace (optional)
//	SLUICE_KILLPOINT_FILE=<path>        where "<point> <namespace>/<name>" is appended once reached
//
// Only the tests build with the tag (go build -tags sluicetest).
package killpoint

// Point is a named point of the manager.
type Point string

// The points. Each comes right after the write it names has succeeded and
// before the Rollout's or BatchRelease's status records it.
const (
	// BatchReleaseClaimed: the BatchRelease controller claimed the
	// workload (restore patch and control info written), its status still
	// says nothing.
	BatchReleaseClaimed Point = "batchrelease-claimed"
	// BatchReleaseHandedBack: a BatchRelease being deleted handed its
	// workload back to the workload's controller; its finalizer is still
	// there.
	BatchReleaseHandedBack Point = "batchrelease-handed-back"
	// DeploymentArmed: the Deployment was put in the Arm gate (still
	// paused, timing inflated) for a batch.
	DeploymentArmed Point = "deployment-armed"
	// DeploymentMoved: the Deployment was unpaused in the Move gate, its
	// maxSurge and maxUnavailable bounding the batch.
	DeploymentMoved Point = "deployment-moved"
	// PartitionLowered: the partition of a StatefulSet, Advanced
	// StatefulSet, CloneSet or StatefulSet-like kind was lowered for a
	// batch.
	PartitionLowered Point = "partition-lowered"
	// TrafficChanged: a Service or route was changed and the grace period
	// starts; the Rollout's status does not record the change yet.
	TrafficChanged Point = "traffic-changed"
	// RolloutApprovalRecorded: an approval was recorded in the Rollout's
	// sluice.dev/approvals annotation; the status that moves the step on
	// is not written yet.
	RolloutApprovalRecorded Point = "rollout-approval-recorded"
	// RolloutFinalizerRemoving: a deleted Rollout gave its workload back
	// and removed its label, and its finalizer is still there.
	RolloutFinalizerRemoving Point = "rollout-finalizer-removing"
)

// Env names the environment variables a sluicetest binary reads.
const (
	EnvPoint     = "SLUICE_KILLPOINT"
	EnvNamespace = "SLUICE_KILLPOINT_NAMESPACE"
	EnvFile      = "SLUICE_KILLPOINT_FILE"
)
