package app

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// reads are the client and reader the release controllers share: writes
// recorded, and reads served from the informer cache unless it has not
// caught up with the manager's own last write of the object
// (ownwrites).
type reads struct {
	client client.Client
	reader client.Reader
}

// newReads wraps mgr's client and readers. The cache serves the kinds
// that the controllers watch from their start as typed objects (the
// built-in workload kinds and what they control); everything else, the
// Rollouts and BatchReleases, custom kinds and Secrets included, is read
// from the API server.
func newReads(mgr ctrl.Manager) *reads {
	t := ownwrites.NewTracker()
	c := mgr.GetClient()
	cached := map[schema.GroupVersionKind]bool{}
	add := func(obj client.Object) {
		if _, dynamic := obj.(*unstructured.Unstructured); dynamic {
			return
		}
		if gvk, err := c.GroupVersionKindFor(obj); err == nil {
			cached[gvk] = true
		}
	}
	// Rollouts and BatchReleases stay uncached reads: their v1alpha1 copies
	// are converted by sluice's own webhook, whose conversion sluice sets on
	// the CRDs at start and again when a CRD is re-applied without it. Until
	// then the API server hands them out unconverted (empty fields), and an
	// informer filled in that window would keep such copies until they
	// change; a read from the API server is right again as soon as the
	// conversion is.
	for _, k := range kinds.Watched() {
		add(k.Watch())
	}
	for _, d := range kinds.Dependents() {
		add(d.Object())
	}
	return &reads{
		client: ownwrites.NewClient(c, t),
		reader: &ownwrites.Reader{Cache: mgr.GetCache(), API: mgr.GetAPIReader(), Tracker: t, Scheme: c, Cached: cached},
	}
}

// cacheOptions keeps the objects that workloads control (ReplicaSets, Pods,
// ControllerRevisions: the bulk of the cache) without their managedFields,
// which sluice never reads on them.
func cacheOptions() cache.Options {
	by := map[client.Object]cache.ByObject{}
	for _, d := range kinds.Dependents() {
		by[d.Object()] = cache.ByObject{Transform: cache.TransformStripManagedFields()}
	}
	return cache.Options{ByObject: by}
}
