// Package daemonset releases a native apps/v1 DaemonSet in batches: it
// holds the DaemonSet with the OnDelete strategy and deletes old pods node
// by node, as many per batch as the step asks for.
package daemonset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/workload"
)

// Supported is true once this package releases DaemonSets.
const Supported = false

// New returns the Releaser of the DaemonSet key.
func New(_ client.Client, _ client.Reader, key types.NamespacedName) (workload.Releaser, error) {
	return nil, fmt.Errorf("daemonset %s: %w", key, workload.ErrUnsupported)
}

// HoldFor returns how DaemonSet updates are held, once supported.
func HoldFor() (workload.Hold, bool) { return nil, false }
