// Package ownwrites lets the manager's controllers read from the informer
// cache without ever acting on a copy older than their own last write.
//
// Reading every object that decides a write straight from the API server
// is safe but does not scale: at 10 Rollouts a release cost 240 uncached
// reads. The informer cache lags the API server by the time a watch event
// takes to arrive. A lag behind someone else's write only delays what
// sluice does (every write that depends on a read carries a precondition,
// so a decision made on a stale copy fails with a conflict and is planned
// again); a lag behind sluice's own write is worse, because the next
// reconcile would repeat or undo the step just taken. A Tracker closes that
// gap, as OpenKruise's resource-version expectations do: the Client records
// the resourceVersion each of its writes returned, and the Reader serves a
// Get from the cache only when the cached copy is at least that new,
// reading the API server otherwise. The API server's resourceVersions are
// etcd revisions, which only grow; one that does not parse as a number is
// never compared, and the read goes to the API server.
package ownwrites

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unknown is the resourceVersion recorded for a write whose outcome is not
// known (a timeout, a dropped connection): no cached copy satisfies it
// until the API server has been read again.
const unknown = math.MaxUint64

// key names one object.
type key struct {
	gk   schema.GroupKind
	name types.NamespacedName
}

// expectation is what the cache must show of one object before it can be
// trusted for it.
type expectation struct {
	// rv is the lowest resourceVersion a cached copy must have.
	rv uint64
	// deleted is the UID of a copy sluice deleted: a cached copy with that
	// UID is stale.
	deleted types.UID
	// at is when the expectation was recorded.
	at time.Time
}

// waitable reports whether a read may wait for the cache to meet e
// (CacheOnly) rather than read the API server: the write's outcome is
// known, and it is recent. A cache that has not met it after maxWait
// may never (the object was deleted by someone else since, or recreated
// after a read found it missing): the API server answers then.
func (e expectation) waitable(now time.Time) bool {
	known := (e.deleted == "" && e.rv != unknown) || (e.deleted != "" && e.deleted != "-")
	return known && now.Sub(e.at) < maxWait
}

// maxWait bounds how long reads made with CacheOnly wait for the cache to
// catch up with an own write before they read the API server.
const maxWait = 2 * time.Second

// Tracker remembers, per object, the newest resourceVersion the manager
// wrote or read from the API server. The zero value is not usable; use
// NewTracker. It is safe for concurrent use.
type Tracker struct {
	mu   sync.Mutex
	want map[key]expectation
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{want: map[key]expectation{}} }

// Len is how many objects the cache has not caught up with yet.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.want)
}

// saw records that the API server holds obj at its resourceVersion (a
// write returned it, or a read from the API server did).
func (t *Tracker) saw(k key, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		n = unknown
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.want[k]; !ok || cur.rv == unknown || n > cur.rv || cur.deleted != "" {
		t.want[k] = expectation{rv: n, at: time.Now()}
	}
}

// lost records a write whose outcome is not known.
func (t *Tracker) lost(k key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.want[k] = expectation{rv: unknown, at: time.Now()}
}

// gone records that the object with uid was deleted, or that the API
// server reported it missing (uid empty).
func (t *Tracker) gone(k key, uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if uid == "" {
		uid = "-"
	}
	t.want[k] = expectation{deleted: uid, at: time.Now()}
}

// cachedCopy is what a cache shows of one object.
type cachedCopy struct {
	// found is false when the cache does not hold the object.
	found bool
	// rv and uid are the copy's resourceVersion and UID.
	rv  string
	uid types.UID
	// leaving is true when the copy has a deletion timestamp.
	leaving bool
}

func copyOf(obj client.Object) cachedCopy {
	return cachedCopy{found: true, rv: obj.GetResourceVersion(), uid: obj.GetUID(), leaving: obj.GetDeletionTimestamp() != nil}
}

// fresh reports whether a cached copy c is at least as new as what sluice
// last wrote or read, and forgets the object once the cache has caught up
// with it. After a delete of a known UID, a copy that shows the object
// leaving (a deletion timestamp: it waits for its grace period or
// finalizers) has caught up with the delete, as has the lack of a copy or
// one of another UID.
func (t *Tracker) fresh(k key, c cachedCopy) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.want[k]
	if !ok {
		return true
	}
	found, rv, uid := c.found, c.rv, c.uid
	var caughtUp bool
	switch {
	case e.deleted != "":
		caughtUp = !found || (e.deleted != "-" && (uid != e.deleted || c.leaving))
	case !found:
		caughtUp = false
	default:
		n, err := strconv.ParseUint(rv, 10, 64)
		caughtUp = err == nil && e.rv != unknown && n >= e.rv
	}
	if caughtUp {
		delete(t.want, k)
	}
	return caughtUp
}

// waiting reports whether a read of k may wait for the cache (waitable).
func (t *Tracker) waiting(k key) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.want[k]
	return ok && e.waitable(time.Now())
}

// ErrBehind is what a Get made with CacheOnly returns when the cache has
// not caught up with the manager's own last write of the object yet.
var ErrBehind = errors.New("the cache has not caught up with the manager's own last write of the object yet")

// BehindRetry is how soon a reconcile that met ErrBehind comes back: a
// watch event usually brings the manager's own write within milliseconds.
const BehindRetry = 100 * time.Millisecond

// cacheOnlyKey marks a context whose reads wait for the cache.
type cacheOnlyKey struct{}

// CacheOnly returns a context whose Gets through a Reader do not read the
// API server when the cache is behind the manager's own recent write of
// the object: they return ErrBehind, and the caller comes back after
// BehindRetry. For the object a reconcile is about, which the manager
// writes every reconcile or two, this saves an uncached read each time
// the next reconcile comes before the watch event of the last write (5
// per release in the 100 x 10 bench). A write whose outcome is unknown,
// or one the cache has not met within two seconds, is still read from
// the API server.
func CacheOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheOnlyKey{}, true)
}

func cacheOnly(ctx context.Context) bool {
	v, _ := ctx.Value(cacheOnlyKey{}).(bool)
	return v
}

// apiServerKey marks a context whose reads must come from the API server.
type apiServerKey struct{}

// FromAPIServer returns a context whose reads through a Reader go to the
// API server, whatever the cache holds. The cache only promises to be no
// older than sluice's own writes; a decision that rests on what someone
// else wrote since (Kubernetes' Deployment controller updating a
// ReplicaSet, say) and that is unsafe to take on an older copy reads
// through such a context. Every caller says why in a comment: these reads
// are the uncached ones that remain.
func FromAPIServer(ctx context.Context) context.Context {
	return context.WithValue(ctx, apiServerKey{}, true)
}

func fromAPIServer(ctx context.Context) bool {
	v, _ := ctx.Value(apiServerKey{}).(bool)
	return v
}

// Reader reads the kinds it is given from the informer cache, as long as
// the cache has caught up with the manager's own writes of the object, and
// everything else from the API server.
type Reader struct {
	// Cache is the manager's cached client.
	Cache client.Reader
	// API reads the API server directly.
	API client.Reader
	// Tracker holds what the manager wrote.
	Tracker *Tracker
	// Scheme names the kind of a typed object.
	Scheme interface {
		GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error)
	}
	// Cached are the kinds (at the version the manager watches them) whose
	// reads the cache may serve. A kind not listed is always read from the
	// API server (the cache would start an informer for it, and sluice may
	// not be allowed to list it).
	Cached map[schema.GroupVersionKind]bool
	// Gated are kinds whose reads the cache serves only while their Gate
	// is open: kinds whose cached copies can be wrong for a while, such as
	// custom resources stored in a version that needs a conversion the
	// API server does not do yet. A closed or missing Gate reads the API
	// server.
	Gated map[schema.GroupVersionKind]*Gate
	// Metadata are the kinds the cache holds as metadata only (a
	// PartialObjectMetadata informer, as for the Services a Rollout's
	// traffic goes through): a metadata read of them
	// (metav1.PartialObjectMetadata or its list) is served from the cache
	// under the same rule; a typed read of them goes to the API server.
	Metadata map[schema.GroupVersionKind]bool
}

// Gate says whether the cache can be trusted for a kind at all. The zero
// value is closed. It is safe for concurrent use.
type Gate struct{ open atomic.Bool }

// Open lets the cache serve the kind's reads.
func (g *Gate) Open() { g.open.Store(true) }

// Close sends the kind's reads to the API server again.
func (g *Gate) Close() { g.open.Store(false) }

// Opened reports whether the cache serves the kind's reads.
func (g *Gate) Opened() bool { return g != nil && g.open.Load() }

// cached reports whether the cache may serve reads of gvk into obj, a
// typed object or a metadata-only one (or their lists).
func (r *Reader) cached(gvk schema.GroupVersionKind, obj runtime.Object) bool {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return r.Metadata[gvk]
	}
	return r.Cached[gvk] || r.Gated[gvk].Opened()
}

// Get reads key into obj: from the cache when the kind is cached and the
// copy there is at least as new as the manager's last write or API read,
// otherwise from the API server (and then remembers what it read, so that
// a later cached read never goes back in time).
func (r *Reader) Get(ctx context.Context, name client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := r.Scheme.GroupVersionKindFor(obj)
	if err != nil || !r.cached(gvk, obj) {
		return r.API.Get(ctx, name, obj, opts...)
	}
	k := key{gk: gvk.GroupKind(), name: name}
	if !fromAPIServer(ctx) {
		err = r.Cache.Get(ctx, name, obj, opts...)
		switch {
		case err == nil && r.Tracker.fresh(k, copyOf(obj)):
			return nil
		case apierrors.IsNotFound(err) && r.Tracker.fresh(k, cachedCopy{}):
			return err
		case err != nil && !apierrors.IsNotFound(err):
			return err
		case cacheOnly(ctx) && r.Tracker.waiting(k):
			return fmt.Errorf("%s %s: %w", gvk.Kind, name, ErrBehind)
		}
	}
	err = r.API.Get(ctx, name, obj, opts...)
	switch {
	case err == nil:
		r.Tracker.saw(k, obj.GetResourceVersion())
	case apierrors.IsNotFound(err):
		r.Tracker.gone(k, "")
	}
	return err
}

// List lists from the cache when the kind is cached and the cache has
// caught up with every write the manager made to objects of that kind in
// the namespace listed; otherwise from the API server. So a decision taken
// on a list (which pods of a DaemonSet to delete next) never rests on a
// copy from before the manager's own last write (the pods it deleted a
// moment ago, shown as still running). An object the manager wrote that
// the cached list does not hold (not there yet, or outside the list's
// label selector: the list cannot tell) sends the list to the API server
// until a read finds the cache caught up with it.
func (r *Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := r.Scheme.GroupVersionKindFor(list)
	if err != nil || fromAPIServer(ctx) {
		return r.API.List(ctx, list, opts...)
	}
	item := gvk.GroupVersion().WithKind(trimList(gvk.Kind))
	if !r.cached(item, list) {
		return r.API.List(ctx, list, opts...)
	}
	if err := r.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	fresh, err := r.Tracker.freshList(item.GroupKind(), lo.Namespace, list)
	if err != nil || fresh {
		return err
	}
	return r.API.List(ctx, list, opts...)
}

// freshList reports whether list, a cached list of objects of kind gk in
// namespace ns ("": every namespace), is at least as new as every write
// the manager made to objects of that kind there, forgetting those the
// cache has caught up with.
func (t *Tracker) freshList(gk schema.GroupKind, ns string, list client.ObjectList) (bool, error) {
	t.mu.Lock()
	var pending []key
	for k := range t.want {
		if k.gk == gk && (ns == "" || k.name.Namespace == ns) {
			pending = append(pending, k)
		}
	}
	t.mu.Unlock()
	if len(pending) == 0 {
		return true, nil
	}
	copies := map[types.NamespacedName]cachedCopy{}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if !ok {
			return fmt.Errorf("list item %T is not an object", o)
		}
		copies[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}] = copyOf(obj)
		return nil
	})
	if err != nil {
		return false, err
	}
	fresh := true
	for _, k := range pending {
		if !t.fresh(k, copies[k.name]) {
			fresh = false
		}
	}
	return fresh, nil
}

// trimList is the kind of the items of a list kind.
func trimList(kind string) string {
	if n := len(kind) - len("List"); n > 0 && kind[n:] == "List" {
		return kind[:n]
	}
	return kind
}
