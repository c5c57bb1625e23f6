// Package canarydeployment releases a Deployment in canary style: a
// separate canary Deployment carries the new revision and is scaled per
// step, while the stable Deployment stays paused at full size; at the end
// the stable Deployment is updated and the canary removed.
package canarydeployment

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/workload"
)

// Supported is true once this package releases Deployments in canary style.
const Supported = false

// New returns the canary-style Releaser of the Deployment key.
func New(_ client.Client, _ client.Reader, key types.NamespacedName) (workload.Releaser, error) {
	return nil, fmt.Errorf("deployment %s in canary style: %w", key, workload.ErrUnsupported)
}
