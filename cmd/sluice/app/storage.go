package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/observability/metrics"
)

// storageRecheck is how often the storage guard reads the CRDs again once
// their objects are all stored as v1beta1; storageRetry is how often it
// tries again while they are not (the conversion webhook not serving yet,
// a write refused).
const (
	storageRecheck = time.Minute
	storageRetry   = 2 * time.Second
)

// guardedCRD is a CRD whose objects the release controllers read from the
// cache only while its gate is open.
type guardedCRD struct {
	// name is the CRD's name.
	name string
	// list is an empty list of its objects, as the manager reads them.
	list func() client.ObjectList
	// gate opens the cache to the kind's reads.
	gate *ownwrites.Gate
}

// storageGuard opens the cache to the Rollout and BatchRelease reads of the
// release controllers once every Rollout and BatchRelease is stored as
// v1beta1, the version the manager watches, and closes it when that stops
// being true.
//
// A cluster where OpenKruise ran may hold objects stored as v1alpha1 (the
// CRD's status.storedVersions says so). The API server converts them
// through sluice's conversion webhook when they are read as v1beta1, but
// only once sluice has set that conversion on the CRD; an informer that
// listed them before then keeps the unconverted copies (no workload kind,
// no steps) until each object next changes, and a controller acting on one
// would take a release as finished. So the guard migrates the storage, as
// Kubernetes' documentation describes: once the API server converts (the
// dry-run probes of enableConversion), it writes every object again
// (an empty status patch, which stores it in the storage version and sends
// the cache a converted copy of each), then sets the CRD's storedVersions
// to [v1beta1], and only then opens the gate. Objects stored as v1beta1 are
// read without any conversion, whether the CRD's conversion is set or not.
type storageGuard struct {
	// api reads the API server.
	api client.Reader
	// client writes, recording its writes for the cached reads.
	client client.Client
	// probe reports whether the API server converts v1alpha1 objects.
	probe func(context.Context) error
	// crds are the guarded CRDs.
	crds []guardedCRD
	// observe, when set, records each gate's state (the
	// sluice_cached_reads gauge), so that a manager reading from the API
	// server is seen, not only logged.
	observe metrics.CacheObserver
}

// newStorageGuard guards the Rollout and BatchRelease CRDs with the gates
// of their cached reads; writes are the migration's (recorded) client,
// probes the one of the dry-run probes.
func newStorageGuard(api client.Reader, writes, probes client.Client, rollouts, batchReleases *ownwrites.Gate, observe metrics.CacheObserver) *storageGuard {
	return &storageGuard{
		api: api, client: writes, observe: observe,
		probe: func(ctx context.Context) error { return probeConversions(ctx, probes) },
		crds: []guardedCRD{
			{name: "rollouts.rollouts.kruise.io", gate: rollouts,
				list: func() client.ObjectList { return &rolloutsv1beta1.RolloutList{} }},
			{name: "batchreleases.rollouts.kruise.io", gate: batchReleases,
				list: func() client.ObjectList { return &rolloutsv1beta1.BatchReleaseList{} }},
		},
	}
}

// NeedLeaderElection is true: only the leader's controllers read through
// the gates, and the migration's writes are made once.
func (g *storageGuard) NeedLeaderElection() bool { return true }

// Start checks the CRDs until ctx is done: every storageRetry until both
// gates are open, then every storageRecheck.
func (g *storageGuard) Start(ctx context.Context) error {
	logger := ctrl.LoggerFrom(ctx).WithName("storage")
	ctx = ctrl.LoggerInto(ctx, logger)
	said := map[string]string{}
	for {
		next := storageRecheck
		for _, c := range g.crds {
			err := g.guard(ctx, c)
			if err == nil {
				delete(said, c.name)
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
			next = storageRetry
			if why := err.Error(); said[c.name] != why {
				said[c.name] = why
				logger.Info("Reading from the API server until the CRD's objects are stored as v1beta1", "crd", c.name, "reason", why)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// guard checks c and opens its gate when the check passes, closes it
// otherwise, and returns why it is closed.
func (g *storageGuard) guard(ctx context.Context, c guardedCRD) error {
	err := g.check(ctx, c)
	g.setGate(c, err == nil)
	return err
}

// check returns nil when all of c's objects are stored as v1beta1,
// migrating them first (with the gate closed) when the CRD says some may
// not be, and otherwise why the gate must stay closed.
func (g *storageGuard) check(ctx context.Context, c guardedCRD) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := g.api.Get(ctx, client.ObjectKey{Name: c.name}, crd); err != nil {
		return fmt.Errorf("reading the CRD: %w", err)
	}
	want := rolloutsv1beta1.GroupVersion.Version
	if storage := storageVersion(crd); storage != want {
		return fmt.Errorf("the CRD stores %q, not %q: apply sluice's CRDs", storage, want)
	}
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	if slices.Equal(stored, []string{want}) {
		if !c.gate.Opened() {
			ctrl.LoggerFrom(ctx).Info("Reading from the cache: every object is stored as v1beta1", "crd", c.name)
		}
		return nil
	}
	g.setGate(c, false)
	if err := g.probe(ctx); err != nil {
		return fmt.Errorf("storedVersions %v, and the API server does not convert yet: %w", stored, err)
	}
	n, err := g.migrate(ctx, c)
	if err != nil {
		return fmt.Errorf("storedVersions %v: storing every object as %s: %w", stored, want, err)
	}
	// The resourceVersion read before the migration: a CRD changed since
	// (its storage version, say) is checked again, not marked.
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": crd.GetResourceVersion()},
		"status":   map[string]any{"storedVersions": []string{want}},
	})
	if err != nil {
		return err
	}
	if err := g.client.Status().Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting storedVersions to [%s] after storing %d objects again: %w", want, n, err)
	}
	ctrl.LoggerFrom(ctx).Info("Stored every object as v1beta1; reading from the cache", "crd", c.name, "objects", n, "was", stored)
	return nil
}

// setGate opens or closes c's gate and records it.
func (g *storageGuard) setGate(c guardedCRD, open bool) {
	if open {
		c.gate.Open()
	} else {
		c.gate.Close()
	}
	if g.observe != nil {
		g.observe.CachedReads(c.name, open)
	}
}

// migrate writes every object of c again, unchanged, so that the API
// server stores it in the CRD's storage version, and returns how many it
// wrote. An object deleted or changed by someone else meanwhile needs no
// write: the change stored it.
func (g *storageGuard) migrate(ctx context.Context, c guardedCRD) (int, error) {
	list := c.list()
	if err := g.api.List(ctx, list); err != nil {
		return 0, err
	}
	n := 0
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if !ok {
			return fmt.Errorf("list item %T is not an object", o)
		}
		err := g.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte("{}")))
		switch {
		case err == nil:
			n++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		default:
			return fmt.Errorf("%s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		return nil
	})
	return n, err
}

// storageVersion is the name of crd's version marked storage.
func storageVersion(crd *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if storage, _ := m["storage"].(bool); storage {
			name, _ := m["name"].(string)
			return name
		}
	}
	return ""
}
