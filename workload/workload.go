// Package workload defines the one interface through which sluice releases
// any kind of workload in batches. Each kind has its own adapter package
// (workload/deployment, ...); the workload kinds table (workload/kinds)
// describes each kind once and picks the adapter for a reference.
package workload

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// ErrNotFound is returned when the referenced workload does not exist.
var ErrNotFound = errors.New("workload not found")

// ErrUnsupported is wrapped by errors for kinds and settings that sluice
// cannot release; the message says which and what to change.
var ErrUnsupported = errors.New("unsupported")

// ErrCannotHoldStable is wrapped by HoldStable's error when the workload's
// kind (or its state) cannot run the stable revision again without its pod
// template changing; the message names the kind and the fix. The workload
// stays held: nothing further is released.
var ErrCannotHoldStable = errors.New("cannot hold the stable revision")

// Status is what a release needs to know about a workload.
type Status struct {
	// Generation and ObservedGeneration of the workload; while they differ
	// the workload's controller has not caught up and counts are stale.
	Generation, ObservedGeneration int64

	// Replicas is the desired number of pods.
	Replicas int32

	// UpdatedReplicas and UpdatedReadyReplicas count the pods running the
	// update revision, and those of them that are ready.
	UpdatedReplicas, UpdatedReadyReplicas int32

	// StableRevision is the revision being replaced (empty when no release
	// is in progress and nothing is being replaced).
	StableRevision string

	// UpdateRevision identifies the workload's current pod template.
	UpdateRevision string

	// PodTemplateHash is the label value that selects pods of the update
	// revision; empty until such pods exist.
	PodTemplateHash string

	// RolloutID is the workload's rollouts.kruise.io/rollout-id.
	RolloutID string

	// InProgressRollout names the Rollout that holds the workload, from the
	// rollouts.kruise.io/in-progressing annotation; empty when none.
	InProgressRollout string

	// InRollback is true when the pod template went back to the stable
	// revision during a release.
	InRollback bool

	// Unsupported says why the workload cannot be released in batches as it
	// is configured (e.g. a Deployment with the Recreate strategy); empty
	// when it can.
	Unsupported string

	// Disabled says why the workload opts out of releases (a custom kind's
	// object without the rollouts.kruise.io/workload-type: statefulset
	// label, as OpenKruise documents); its Rollout is then Disabled. Empty
	// when it takes part.
	Disabled string

	// Settled is true when the workload runs exactly the pods its
	// controller wants: none is still being created or removed.
	Settled bool

	// MaxUnavailable is the workload's own maxUnavailable resolved against
	// its replicas (what a nil failureThreshold tolerates when the
	// BatchRelease opts in with sluice.dev/failure-threshold-default).
	MaxUnavailable int32

	// PodSelector selects the workload's pods (all revisions).
	PodSelector *metav1.LabelSelector

	// RevisionLabel is the pod label whose value tells a pod's revision:
	// pod-template-hash for Deployments and CloneSets,
	// controller-revision-hash for StatefulSet-like kinds and DaemonSets.
	// StableRevision, UpdateRevision and PodTemplateHash are values of it.
	RevisionLabel string

	// Labels are the workload's labels.
	Labels map[string]string

	// UpToDate is true when every pod runs the update revision and the
	// workload's own controller reports the rollout complete.
	UpToDate bool

	// Adopt is true when the workload carries the marks of a release that
	// sluice never claimed (OpenKruise Rollouts left it held mid-release):
	// the BatchRelease claims it before going on, whatever its status says,
	// so that sluice records what to hand back, never OpenKruise's
	// mid-release values.
	Adopt bool
}

// Releaser releases one workload in batches. Implementations must leave the
// workload, at every moment, in a state its own controller can finish
// without sluice.
type Releaser interface {
	// Status reads the workload. It returns ErrNotFound when it is gone.
	Status(ctx context.Context) (*Status, error)

	// Claim takes control of the workload for a release and records what
	// Finalize needs to restore it. It is idempotent.
	Claim(ctx context.Context, owner Owner) error

	// UpgradeBatch moves the workload towards desired pods on the update
	// revision. It reports true once the workload's pods are placed; their
	// readiness is judged by the caller from Status.
	UpgradeBatch(ctx context.Context, desired int32) (placed bool, err error)

	// Finalize hands the workload back to its own controller, restoring
	// every field sluice changed. With wait it reports true only once the
	// workload is fully updated; without, once it is handed back.
	Finalize(ctx context.Context, wait bool) (done bool, err error)

	// HoldStable moves every pod back to the stable revision and keeps the
	// workload held, for an aborted release. It never changes the pod
	// template; it moves pods within the workload's maxUnavailable where
	// the kind allows, a step per call. It reports true once no pod runs
	// another revision and the stable pods are ready. An error wrapping
	// ErrCannotHoldStable says the kind cannot do it.
	HoldStable(ctx context.Context) (done bool, err error)
}

// Target names the workload a release works on and how it is released.
type Target struct {
	// Namespace of the workload.
	Namespace string
	// Ref names the workload.
	Ref rolloutsv1beta1.ObjectRef
	// Style is how new-revision pods are produced: Partition (in place,
	// the default), Canary (an extra workload) or BlueGreen.
	Style rolloutsv1beta1.RollingStyleType
	// PatchPodTemplateMetadata holds the labels and annotations that the
	// Canary style adds to the pod template of the extra canary workload
	// (spec.releasePlan.patchPodTemplateMetadata); nil adds none.
	PatchPodTemplateMetadata *rolloutsv1beta1.PatchPodTemplateMetadata
}

// Factory returns the Releaser for a target. Writes go through c; reads
// that decide what to write go through reader, which should not be a cache
// (a stale read could undo a step).
type Factory func(c client.Client, reader client.Reader, t Target) (Releaser, error)

// Hold changes updated, an update of old by someone other than sluice, so
// that the active Rollout named rollout keeps control of the workload: a
// new release is held (paused, or its partition set so that no pod
// changes) and marked with rollouts.kruise.io/in-progressing, and while a
// release is in progress the fields sluice controls keep their values. It
// reports whether it changed updated, and why (for logs).
type Hold func(old, updated *unstructured.Unstructured, rollout string) (changed bool, why string, err error)

// RolloutID reads a workload's rollouts.kruise.io/rollout-id: the
// annotation, or the label when there is no annotation. Every part of sluice
// (the webhook that detects a release, the controllers that record it and
// label pods) reads it through this function.
func RolloutID(labels, annotations map[string]string) string {
	if v := annotations[rolloutsv1beta1.RolloutIDLabel]; v != "" {
		return v
	}
	return labels[rolloutsv1beta1.RolloutIDLabel]
}

// Owner identifies the BatchRelease controlling a workload.
type Owner struct {
	// BatchRelease is the name of the controlling BatchRelease.
	BatchRelease string
	// Rollout is the name of the Rollout behind it, if any.
	Rollout string
	// Ref is the workload reference.
	Ref rolloutsv1beta1.ObjectRef
}
