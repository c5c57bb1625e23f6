// Package lookup picks the workload adapter for a workload reference. It is
// the only place that switches on workload kinds.
package lookup

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/canarydeployment"
	"github.com/sluice-dev/sluice/workload/daemonset"
	"github.com/sluice-dev/sluice/workload/deployment"
	"github.com/sluice-dev/sluice/workload/partition"
)

// The kinds OpenKruise Rollouts releases, besides StatefulSet-like custom
// kinds.
var (
	deploymentKind        = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind       = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetKind         = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	cloneSetKind          = schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}
	advancedStatefulSet   = schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}
	advancedDaemonSetKind = schema.GroupKind{Group: "apps.kruise.io", Kind: "DaemonSet"}
)

// classify says whether OpenKruise Rollouts accepts the kind gk (known) and
// whether this version of sluice releases it (supported).
func classify(gk schema.GroupKind) (known, supported bool) {
	switch gk {
	case deploymentKind:
		return true, true
	case daemonSetKind:
		return true, daemonset.Supported
	case statefulSetKind, cloneSetKind, advancedStatefulSet, advancedDaemonSetKind:
		return true, partition.Supported
	}
	// Any other CRD kind may be StatefulSet-like; its CRD decides, which
	// the partition adapter checks when it reads the workload.
	return false, partition.Supported && partition.IsCustomCandidate(gk)
}

// GroupKind parses the group and kind of ref.
func GroupKind(ref rolloutsv1beta1.ObjectRef) (schema.GroupKind, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, nil
}

// Known reports whether ref names a kind OpenKruise Rollouts can release.
func Known(ref rolloutsv1beta1.ObjectRef) bool {
	gk, err := GroupKind(ref)
	if err != nil {
		return false
	}
	known, _ := classify(gk)
	return known
}

// KnownKinds lists the kinds Known accepts, for error messages.
func KnownKinds() string {
	return "apps/Deployment, apps/StatefulSet, apps/DaemonSet, apps.kruise.io/CloneSet, apps.kruise.io/StatefulSet, apps.kruise.io/DaemonSet"
}

// Supported reports whether this version of sluice releases ref in the
// given style, and when not, why.
func Supported(ref rolloutsv1beta1.ObjectRef, style rolloutsv1beta1.RollingStyleType) (bool, string) {
	gk, err := GroupKind(ref)
	if err != nil {
		return false, err.Error()
	}
	if _, supported := classify(gk); !supported {
		return false, fmt.Sprintf("workload kind %s is not supported yet by this version of sluice", gk)
	}
	switch {
	case style == "" || style == rolloutsv1beta1.PartitionRollingStyle:
		return true, ""
	case style == rolloutsv1beta1.CanaryRollingStyle && gk == deploymentKind && canarydeployment.Supported:
		return true, ""
	case style == rolloutsv1beta1.BlueGreenRollingStyle && gk == deploymentKind:
		return true, ""
	case style == rolloutsv1beta1.BlueGreenRollingStyle && gk == cloneSetKind && partition.Supported:
		return true, ""
	}
	return false, fmt.Sprintf("%s style releases of %s are not supported yet by this version of sluice", style, gk)
}

// New returns the adapter that releases the target.
func New(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
	if ok, why := Supported(t.Ref, t.Style); !ok {
		return nil, fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Ref.Name}
	gk, _ := GroupKind(t.Ref)
	switch {
	case gk == deploymentKind && t.Style == rolloutsv1beta1.CanaryRollingStyle:
		return canarydeployment.New(c, reader, t)
	case gk == deploymentKind && t.Style == rolloutsv1beta1.BlueGreenRollingStyle:
		return deployment.NewBlueGreen(c, reader, key), nil
	case gk == deploymentKind:
		return deployment.New(c, reader, key), nil
	case gk == daemonSetKind:
		return daemonset.New(c, reader, key)
	case gk == cloneSetKind && t.Style == rolloutsv1beta1.BlueGreenRollingStyle:
		return partition.NewBlueGreen(c, reader, schema.FromAPIVersionAndKind(t.Ref.APIVersion, t.Ref.Kind), key)
	}
	return partition.New(c, reader, schema.FromAPIVersionAndKind(t.Ref.APIVersion, t.Ref.Kind), key)
}

// HoldFor returns how updates of kind gk are held for a release.
func HoldFor(gk schema.GroupKind) (workload.Hold, bool) {
	switch gk {
	case deploymentKind:
		return deployment.Hold, true
	case daemonSetKind:
		return daemonset.HoldFor()
	}
	return partition.HoldFor(gk)
}

// WorkloadType is the rollouts.kruise.io/workload-type label value for ref.
func WorkloadType(ref rolloutsv1beta1.ObjectRef) string {
	gk, _ := GroupKind(ref)
	switch gk.Kind {
	case "Deployment":
		return rolloutsv1beta1.WorkloadTypeDeployment
	case "CloneSet":
		return rolloutsv1beta1.WorkloadTypeCloneSet
	case "DaemonSet":
		return rolloutsv1beta1.WorkloadTypeDaemonSet
	}
	return rolloutsv1beta1.WorkloadTypeStatefulSet
}
