package partition

import (
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// holdPartition is the partition that holds a StatefulSet-like workload or
// an Advanced DaemonSet: no ordinal (or node count) reaches it, so no pod
// changes, even when the same write also scales the workload up. It is the
// value OpenKruise Rollouts uses (math.MaxInt16).
const holdPartition = math.MaxInt16

// holdPercent is the partition that holds a CloneSet: every pod is kept on
// its revision, as OpenKruise Rollouts does.
const holdPercent = "100%"

// The pod labels that tell a pod's revision.
const (
	controllerRevisionHashLabel = "controller-revision-hash"
	podTemplateHashLabel        = "pod-template-hash"
)

// profile describes where a kind keeps what a partition release reads and
// writes. All kinds keep their pod selector at spec.selector and their pod
// template at spec.template.
type profile struct {
	// gk is the kind.
	gk schema.GroupKind
	// custom is true for a StatefulSet-like kind defined by a CRD that must
	// be labelled (and have a partition) to be released.
	custom bool
	// partition is the path of the update partition: the number of pods
	// (or nodes) kept on the old revision.
	partition []string
	// percent is true when the partition may also be a percentage.
	percent bool
	// hold is the partition value that changes no pod.
	hold any
	// rollingUpdateOnly is true for kinds whose spec.updateStrategy.type
	// must be empty or RollingUpdate for the partition to apply.
	rollingUpdateOnly bool
	// nodes is true when the replicas are the nodes the workload runs on
	// (status.desiredNumberScheduled) rather than spec.replicas.
	nodes bool
	// updated and updatedReady are the status fields counting pods of the
	// update revision and those of them ready; updatedReady nil means the
	// status has no such field and pods are counted.
	updated, updatedReady []string
	// current and update are the status fields naming the current (stable)
	// and update revisions; current nil means the status has none and the
	// stable revision is read from the pods when a release starts.
	current, update []string
	// revisionLabel is the pod label whose values are the revisions.
	revisionLabel string
	// shortRevision is true when the label carries only the hash suffix of
	// the status' revision names (CloneSet's pod-template-hash).
	shortRevision bool
	// maxUnavailable is the path of the kind's maxUnavailable, and
	// defaultMaxUnavailable its default.
	maxUnavailable        []string
	defaultMaxUnavailable intstr.IntOrString
	// maxSurge and minReadySeconds are the paths of the kind's maxSurge
	// and minReadySeconds, which a blue-green release holds (with
	// maxUnavailable); nil for kinds released only through their
	// partition.
	maxSurge, minReadySeconds []string
	// ordinals is true when the partition is an ordinal: pods at or above
	// it run the update revision, those below keep theirs.
	ordinals bool
}

// Profile is how a kind keeps what a partition release reads and writes.
// The workload kinds table (workload/kinds) gives each kind released
// through its partition one, from the functions below; this package names
// no kind.
type Profile struct {
	p profile
}

// StatefulSet is the profile of a native StatefulSet of kind gk: pods whose
// ordinal is at least the partition run the update revision.
func StatefulSet(gk schema.GroupKind) Profile {
	return Profile{statefulSetLike(gk, false)}
}

// AdvancedStatefulSet is the profile of an OpenKruise Advanced StatefulSet
// of kind gk: a StatefulSet whose status also counts the ready pods of the
// update revision.
func AdvancedStatefulSet(gk schema.GroupKind) Profile {
	p := statefulSetLike(gk, false)
	p.updatedReady = []string{"status", "updatedReadyReplicas"}
	return Profile{p}
}

// Custom is the profile of a StatefulSet-like custom kind gk: released like
// a StatefulSet once its CRD qualifies (CheckCustomKind) and only its
// objects labelled rollouts.kruise.io/workload-type: statefulset.
func Custom(gk schema.GroupKind) Profile {
	return Profile{statefulSetLike(gk, true)}
}

// statefulSetLike is the profile of native and Advanced StatefulSets and of
// StatefulSet-like custom kinds: pods whose ordinal is at least the
// partition run the update revision.
func statefulSetLike(gk schema.GroupKind, custom bool) profile {
	return profile{
		gk:                    gk,
		custom:                custom,
		partition:             []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
		hold:                  int64(holdPartition),
		rollingUpdateOnly:     true,
		updated:               []string{"status", "updatedReplicas"},
		current:               []string{"status", "currentRevision"},
		update:                []string{"status", "updateRevision"},
		revisionLabel:         controllerRevisionHashLabel,
		maxUnavailable:        []string{"spec", "updateStrategy", "rollingUpdate", "maxUnavailable"},
		defaultMaxUnavailable: intstr.FromInt32(1),
		ordinals:              true,
	}
}

// CloneSet is the profile of an OpenKruise CloneSet of kind gk: a
// partition that may be a percentage, and the fields a blue-green release
// holds.
func CloneSet(gk schema.GroupKind) Profile {
	return Profile{profile{
		gk:                    gk,
		partition:             []string{"spec", "updateStrategy", "partition"},
		percent:               true,
		hold:                  holdPercent,
		updated:               []string{"status", "updatedReplicas"},
		updatedReady:          []string{"status", "updatedReadyReplicas"},
		current:               []string{"status", "currentRevision"},
		update:                []string{"status", "updateRevision"},
		revisionLabel:         podTemplateHashLabel,
		shortRevision:         true,
		maxUnavailable:        []string{"spec", "updateStrategy", "maxUnavailable"},
		defaultMaxUnavailable: intstr.FromString("20%"),
		maxSurge:              []string{"spec", "updateStrategy", "maxSurge"},
		minReadySeconds:       []string{"spec", "minReadySeconds"},
	}}
}

// AdvancedDaemonSet is the profile of an OpenKruise Advanced DaemonSet of
// kind gk: the partition counts nodes.
func AdvancedDaemonSet(gk schema.GroupKind) Profile {
	return Profile{profile{
		gk:                    gk,
		partition:             []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
		hold:                  int64(holdPartition),
		nodes:                 true,
		updated:               []string{"status", "updatedNumberScheduled"},
		update:                []string{"status", "daemonSetHash"},
		revisionLabel:         controllerRevisionHashLabel,
		maxUnavailable:        []string{"spec", "updateStrategy", "rollingUpdate", "maxUnavailable"},
		defaultMaxUnavailable: intstr.FromInt32(1),
	}}
}

// revisionValue turns a revision name from the status into the value of
// the pod revision label.
func (p profile) revisionValue(name string) string {
	if !p.shortRevision || name == "" {
		return name
	}
	return name[strings.LastIndex(name, "-")+1:]
}
