// Package kinds describes every workload kind sluice releases, once: one
// row per kind in the table below says its GroupKind, its workload type,
// the rolling styles it is released in, the adapter that releases it, how
// the workload webhook holds its updates, where its revisions are kept and
// what the controllers watch for it. Everything else that depends on a
// kind derives it from the table: admission (the known kinds, the
// blue-green kinds, the workload webhook's rules in webhook/registration),
// the controllers' static watches, the adapter for a reference (New) and
// the revision history (KeptIn). example_test.go adds a kind this way.
//
// Adding a kind:
//  1. its adapter package under workload/ (a workload.Releaser and a
//     workload.Hold), or a profile of workload/partition for a kind
//     released through its partition;
//  2. one row in builtin();
//  3. what is not code: the RBAC markers for its resources
//     (controllers/batchrelease/watches.go), the workload webhook's rules in
//     the Helm chart (charts/sluice/templates/webhooks.yaml, which
//     test/helm compares with the table's) and docs/workloads.md.
//
// Any other kind of a CustomResourceDefinition group may be
// StatefulSet-like: its CRD decides (workload/partition checks it when it
// reads the workload), and it is released like a StatefulSet (custom).
package kinds

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/canarydeployment"
	"github.com/sluice-dev/sluice/workload/daemonset"
	"github.com/sluice-dev/sluice/workload/deployment"
	"github.com/sluice-dev/sluice/workload/partition"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// Kind is one row of the table: everything sluice needs to know about a
// workload kind.
type Kind struct {
	// GroupKind names the kind.
	GroupKind schema.GroupKind
	// Resource is the kind's plural resource name, and WebhookVersion the
	// version the workload webhook's rule matches ("*" for every version
	// the group serves).
	Resource, WebhookVersion string
	// Type is the rollouts.kruise.io/workload-type label value of the
	// kind's workloads.
	Type string
	// Styles are the rolling styles, besides Partition (in place, which
	// every kind has), that sluice releases the kind in.
	Styles []rolloutsv1beta1.RollingStyleType
	// New returns the adapter that releases a target of the kind in its
	// style (Partition, or one of Styles).
	New workload.Factory
	// Hold is how the workload webhook holds an update of the kind.
	Hold workload.Hold
	// Revisions names the objects that keep the kind's revisions.
	Revisions revisions.Store
	// Watch returns the typed object the controllers watch from their
	// start for workloads of the kind; nil for a kind that may not be
	// installed, watched once a Rollout names it (controllers/dynamicwatch).
	Watch func() client.Object
	// Dependents return the objects a workload of the kind controls whose
	// changes its release waits on (a Deployment's ReplicaSets, a
	// DaemonSet's pods); the batchrelease controller watches them.
	Dependents []func() client.Object
	// TemplateRevision, for a kind whose update revision is a function of
	// the workload object alone (a Deployment's pod-template hash),
	// computes it from a typed copy (Watch's type), with no further read;
	// nil for kinds whose controller names their revisions.
	TemplateRevision func(client.Object) (string, bool)
}

// The rollouts.kruise.io groups of workload kinds.
const (
	appsGroup   = appsv1.GroupName
	kruiseGroup = "apps.kruise.io"
)

// builtin is the table: the kinds OpenKruise Rollouts releases by name, in
// the order admission lists them.
func builtin() table {
	return table{
		{
			GroupKind: schema.GroupKind{Group: appsGroup, Kind: "Deployment"}, Resource: "deployments", WebhookVersion: "v1",
			Type:   rolloutsv1beta1.WorkloadTypeDeployment,
			Styles: []rolloutsv1beta1.RollingStyleType{rolloutsv1beta1.CanaryRollingStyle, rolloutsv1beta1.BlueGreenRollingStyle},
			New:    newDeployment, Hold: deployment.Hold, Revisions: revisions.ReplicaSets,
			Watch:            func() client.Object { return &appsv1.Deployment{} },
			Dependents:       []func() client.Object{func() client.Object { return &appsv1.ReplicaSet{} }},
			TemplateRevision: deployment.TemplateRevision,
		},
		partitionKind(partition.StatefulSet, appsGroup, "StatefulSet", "statefulsets", "v1", rolloutsv1beta1.WorkloadTypeStatefulSet,
			func() client.Object { return &appsv1.StatefulSet{} }),
		{
			GroupKind: schema.GroupKind{Group: appsGroup, Kind: "DaemonSet"}, Resource: "daemonsets", WebhookVersion: "v1",
			Type: rolloutsv1beta1.WorkloadTypeDaemonSet,
			New: func(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
				return daemonset.New(c, reader, keyOf(t))
			},
			Hold: daemonset.Hold, Revisions: revisions.ControllerRevisions,
			Watch:      func() client.Object { return &appsv1.DaemonSet{} },
			Dependents: []func() client.Object{func() client.Object { return &corev1.Pod{} }},
		},
		withStyles(partitionKind(partition.CloneSet, kruiseGroup, "CloneSet", "clonesets", "*", rolloutsv1beta1.WorkloadTypeCloneSet, nil),
			rolloutsv1beta1.BlueGreenRollingStyle),
		partitionKind(partition.AdvancedStatefulSet, kruiseGroup, "StatefulSet", "statefulsets", "*", rolloutsv1beta1.WorkloadTypeStatefulSet, nil),
		partitionKind(partition.AdvancedDaemonSet, kruiseGroup, "DaemonSet", "daemonsets", "*", rolloutsv1beta1.WorkloadTypeDaemonSet, nil),
	}
}

// newDeployment releases a Deployment: in place (Partition), with an extra
// canary Deployment (Canary) or blue-green.
func newDeployment(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
	switch t.Style {
	case rolloutsv1beta1.CanaryRollingStyle:
		return canarydeployment.New(c, reader, t)
	case rolloutsv1beta1.BlueGreenRollingStyle:
		return deployment.NewBlueGreen(c, reader, keyOf(t)), nil
	}
	return deployment.New(c, reader, keyOf(t)), nil
}

// partitionKind is the row of a kind released through its partition
// (workload/partition) with the profile profile makes for it; a BlueGreen
// style releases it with partition.NewBlueGreen.
func partitionKind(profile func(schema.GroupKind) partition.Profile, group, kind, resource, version, typ string, watch func() client.Object) Kind {
	gk := schema.GroupKind{Group: group, Kind: kind}
	p := profile(gk)
	return Kind{
		GroupKind: gk, Resource: resource, WebhookVersion: version, Type: typ,
		New: func(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
			gvk := schema.FromAPIVersionAndKind(t.Ref.APIVersion, t.Ref.Kind)
			if t.Style == rolloutsv1beta1.BlueGreenRollingStyle {
				return partition.NewBlueGreen(c, reader, p, gvk, keyOf(t))
			}
			return partition.New(c, reader, p, gvk, keyOf(t)), nil
		},
		Hold:      partition.HoldFor(p),
		Revisions: revisions.ControllerRevisions,
		Watch:     watch,
	}
}

// withStyles returns k released in styles too.
func withStyles(k Kind, styles ...rolloutsv1beta1.RollingStyleType) Kind {
	k.Styles = append(k.Styles, styles...)
	return k
}

// custom is the row of a StatefulSet-like custom kind gk, which no table
// names: released through its partition once its CRD qualifies, its
// revisions in ControllerRevisions, watched once a Rollout names it.
func custom(gk schema.GroupKind) Kind {
	return partitionKind(partition.Custom, gk.Group, gk.Kind, "", "", rolloutsv1beta1.WorkloadTypeStatefulSet, nil)
}

// keyOf is the name of the workload t names.
func keyOf(t workload.Target) types.NamespacedName {
	return types.NamespacedName{Namespace: t.Namespace, Name: t.Ref.Name}
}
