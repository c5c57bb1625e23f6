package app

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// reads are the client and reader the release controllers share: writes
// recorded, and reads served from the informer cache unless it has not
// caught up with the manager's own last write of the object
// (ownwrites).
type reads struct {
	client client.Client
	reader client.Reader
	// guard opens the cache to Rollouts and BatchReleases once they are
	// all stored as v1beta1.
	guard *storageGuard
}

// newReads wraps mgr's client and readers. The cache serves the kinds
// that the controllers watch from their start as typed objects (the
// built-in workload kinds and what they control), and Rollouts and
// BatchReleases while the storage guard lets it; everything else, custom
// kinds and Secrets included, is read from the API server.
func newReads(mgr ctrl.Manager, observe metrics.CacheObserver) *reads {
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
	for _, k := range kinds.Watched() {
		add(k.Watch())
	}
	for _, d := range kinds.Dependents() {
		add(d.Object())
	}
	// Rollouts and BatchReleases are read from the cache only once the
	// storage guard has seen every one of them stored as v1beta1: objects
	// stored as v1alpha1 are converted by sluice's own webhook, which
	// sluice sets on the CRDs at start, and an informer filled before that
	// would keep their unconverted copies (empty fields) until they change.
	rollouts, batchReleases := &ownwrites.Gate{}, &ownwrites.Gate{}
	gated := map[schema.GroupVersionKind]*ownwrites.Gate{
		rolloutsv1beta1.GroupVersion.WithKind("Rollout"):      rollouts,
		rolloutsv1beta1.GroupVersion.WithKind("BatchRelease"): batchReleases,
	}
	// What a Rollout's traffic goes through (Services, Ingresses) is
	// watched as metadata only (controllers/rollout): the cache serves
	// metadata reads of those kinds, such as the hand-back's search for
	// the Services a Rollout narrowed.
	metadata := map[schema.GroupVersionKind]bool{}
	for _, w := range providers.Watches() {
		if !w.ServedLater {
			metadata[w.GVK] = true
		}
	}
	wc := ownwrites.NewClient(c, t)
	return &reads{
		client: wc,
		reader: &ownwrites.Reader{Cache: mgr.GetCache(), API: mgr.GetAPIReader(), Tracker: t, Scheme: c, Cached: cached, Gated: gated, Metadata: metadata},
		guard:  newStorageGuard(mgr.GetAPIReader(), wc, c, rollouts, batchReleases, observe),
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
