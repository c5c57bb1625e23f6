// Package partition releases StatefulSet-like workloads in batches through
// their update partition: native StatefulSets, OpenKruise Advanced
// StatefulSets, CloneSets and Advanced DaemonSets, and custom kinds
// labelled rollouts.kruise.io/workload-type: statefulset.
package partition

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/workload"
)

// Supported is true once this package releases its kinds.
const Supported = false

// New returns the Releaser of the workload key of kind gvk.
func New(_ client.Client, _ client.Reader, gvk schema.GroupVersionKind, key types.NamespacedName) (workload.Releaser, error) {
	return nil, fmt.Errorf("%s %s: %w", gvk.Kind, key, workload.ErrUnsupported)
}

// HoldFor returns how updates of kind gk are held, if this package
// releases it.
func HoldFor(schema.GroupKind) (workload.Hold, bool) { return nil, false }
