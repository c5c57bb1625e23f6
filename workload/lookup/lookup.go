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
	"github.com/sluice-dev/sluice/workload/deployment"
)

// classify says whether OpenKruise Rollouts accepts the kind gk (known) and
// whether this version of sluice releases it (supported).
func classify(gk schema.GroupKind) (known, supported bool) {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return true, true
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"},
		schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"},
		schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps.kruise.io", Kind: "DaemonSet"}:
		return true, false
	}
	return false, false
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

// Supported reports whether this version of sluice releases ref in place,
// and when not, why.
func Supported(ref rolloutsv1beta1.ObjectRef) (bool, string) {
	gk, err := GroupKind(ref)
	if err != nil {
		return false, err.Error()
	}
	if _, supported := classify(gk); supported {
		return true, ""
	}
	return false, fmt.Sprintf("workload kind %s is not supported yet by this version of sluice", gk)
}

// New returns the adapter that releases the workload ref in namespace.
func New(c client.Client, reader client.Reader, namespace string, ref rolloutsv1beta1.ObjectRef) (workload.Releaser, error) {
	if ok, why := Supported(ref); !ok {
		return nil, fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	return deployment.New(c, reader, key), nil
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
