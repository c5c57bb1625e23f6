package deployment

import "math"

// Inflated timing values: with minReadySeconds this high, new pods become
// Ready but never count as available, so Kubernetes' rolling update stops at
// exactly the size the gates allow.
const (
	heldMinReadySeconds         = math.MaxInt32 - 1
	heldProgressDeadlineSeconds = math.MaxInt32
)

// gateInput is what planGate needs to know about a Deployment.
type gateInput struct {
	// Replicas is spec.replicas.
	Replicas int32
	// Desired is how many pods should run the new revision.
	Desired int32
	// NewReplicas and NewReady are spec.replicas and status.readyReplicas of
	// the new ReplicaSet (0 when it does not exist yet).
	NewReplicas, NewReady int32
	// OldReplicas is the sum of spec.replicas of the other ReplicaSets.
	OldReplicas int32
	// Surge and Unavailable are the user's maxSurge and maxUnavailable,
	// resolved to numbers.
	Surge, Unavailable int32
	// BlueGreen releases the new pods beside all the old ones: old pods are
	// never removed until the release ends.
	BlueGreen bool
	// Armed is true when the Deployment and its new ReplicaSet already carry
	// the inflated minReadySeconds and no new pod counts as available.
	Armed bool
}

// gateMode is one of the three states a Deployment is put in.
type gateMode int

const (
	// modeHold: paused, maxSurge 0, original timing. Kubernetes changes
	// nothing; unpausing by hand finishes the rollout with no surge and the
	// user's maxUnavailable.
	modeHold gateMode = iota
	// modeArm: still paused, timing inflated, waiting for the new ReplicaSet
	// to stop counting its pods as available.
	modeArm
	// modeMove: unpaused with inflated timing; maxUnavailable and maxSurge
	// bound the rolling update to the batch.
	modeMove
)

// gate is what sluice writes onto a Deployment.
type gate struct {
	Mode           gateMode
	MaxSurge       int32
	MaxUnavailable int32
	// Inflated keeps the inflated timing in modeHold: a blue-green
	// Deployment whose new ReplicaSet has every replica must not see them
	// available, or Kubernetes, finding it saturated, scales the old
	// ReplicaSets to 0 even while paused.
	Inflated bool
}

// placed reports whether the ReplicaSets already have the batch's sizes.
func (in gateInput) placed() bool {
	return in.NewReplicas >= in.Desired && in.OldReplicas <= in.Replicas-in.Desired
}

// planGate decides the gate for one reconcile of a batch. Kubernetes'
// rolling update, with new pods never available, sizes the old ReplicaSets
// to replicas-maxUnavailable and the new one to at most maxUnavailable+
// maxSurge. So maxUnavailable grows with the new pods that are ready (never
// past the batch), and maxSurge fills the rest of the batch up to the user's
// maxSurge: ready capacity never falls below replicas minus the user's
// maxUnavailable and never exceeds replicas plus the user's maxSurge.
func planGate(in gateInput) gate {
	if in.BlueGreen {
		return planBlueGreenGate(in)
	}
	hold := gate{Mode: modeHold, MaxSurge: 0, MaxUnavailable: max(in.Unavailable, 1)}
	if in.Desired <= 0 || in.placed() {
		return hold
	}
	if !in.Armed {
		hold.Mode = modeArm
		return hold
	}
	unavailable := min(in.Desired, in.NewReady+in.Unavailable)
	surge := min(in.Surge, max(0, in.Desired-unavailable))
	if unavailable == 0 && surge == 0 {
		// Both zero is invalid for a Deployment; only reachable with a
		// user maxSurge of 0, where maxUnavailable is at least 1.
		unavailable = 1
	}
	return gate{Mode: modeMove, MaxSurge: surge, MaxUnavailable: unavailable}
}

// planBlueGreenGate is planGate for a blue-green release: maxUnavailable is
// always 0, so Kubernetes never removes an old pod while the new ones never
// count as available, and maxSurge is the batch, so the new ReplicaSet grows
// beside the full old one. Between batches the Deployment is paused with
// maxSurge equal to the new pods it has, which Kubernetes' proportional
// scaling of a paused Deployment leaves alone, and (like every Hold) with
// the user's minReadySeconds and progressDeadlineSeconds: unpaused by hand
// its new pods count as available, so Kubernetes removes the old ones and
// finishes with no pod unavailable instead of running both forever. The
// exception is a hold with as many new pods as replicas (a full step):
// available, they would make the new ReplicaSet saturated, and Kubernetes
// scales the old ones to 0 even while paused; that hold keeps the inflated
// timing, and only the restore patch finishes it.
func planBlueGreenGate(in gateInput) gate {
	hold := gate{Mode: modeHold, MaxSurge: max(in.NewReplicas, 1), MaxUnavailable: 0, Inflated: in.NewReplicas >= in.Replicas}
	if in.Desired <= 0 || in.NewReplicas >= in.Desired {
		return hold
	}
	if !in.Armed {
		hold.Mode = modeArm
		return hold
	}
	return gate{Mode: modeMove, MaxSurge: in.Desired, MaxUnavailable: 0}
}
