package ownwrites

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// countingReader counts the Gets and Lists that reach it.
type countingReader struct {
	client.Reader
	gets, lists int
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists++
	return c.Reader.List(ctx, list, opts...)
}

func (c *countingReader) Get(ctx context.Context, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, k, obj, opts...)
}

var deployments = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// snapshot is a cache: it shows each object as it was when the test last
// called take, however the API server changed it since.
type snapshot struct {
	client.Reader
	objs map[string]*appsv1.Deployment
}

func (s *snapshot) Get(_ context.Context, k client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	d, ok := s.objs[k.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, k.Name)
	}
	d.DeepCopyInto(obj.(*appsv1.Deployment))
	return nil
}

// List lists the Deployments of the snapshot in the namespace asked for.
func (s *snapshot) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	out := list.(*appsv1.DeploymentList)
	out.Items = nil
	for _, d := range s.objs {
		if lo.Namespace == "" || d.Namespace == lo.Namespace {
			out.Items = append(out.Items, *d.DeepCopy())
		}
	}
	return nil
}

// world is an API server (a fake client) and a cache of it.
type world struct {
	api    client.WithWatch
	cache  *snapshot
	apiR   *countingReader
	reader *Reader
	client *Client
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	w := &world{
		api:   fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build(),
		cache: &snapshot{objs: map[string]*appsv1.Deployment{}},
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			w.take(t, d.Name)
		}
	}
	tr := NewTracker()
	w.apiR = &countingReader{Reader: w.api}
	w.reader = &Reader{Cache: w.cache, API: w.apiR, Tracker: tr, Scheme: w.api, Cached: map[schema.GroupVersionKind]bool{deployments: true}}
	w.client = NewClient(w.api, tr)
	return w
}

// take makes the cache show what the API server holds of name now.
func (w *world) take(t *testing.T, name string) {
	t.Helper()
	cur := &appsv1.Deployment{}
	if err := w.api.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, cur); err != nil {
		t.Fatal(err)
	}
	w.cache.objs[name] = cur
}

func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestReader_servesTheCacheUntilAnOwnWriteIsNewer(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	got := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if w.apiR.gets != 0 {
		t.Fatalf("a read nobody wrote went to the API server %d times", w.apiR.gets)
	}

	// Our own write: the cache has not seen it, so the next read is fresh.
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Paused = true
	if err := w.client.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	after := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, after); err != nil {
		t.Fatal(err)
	}
	if !after.Spec.Paused || w.apiR.gets != 1 {
		t.Fatalf("after an own write: paused=%v API reads=%d, want the written copy from one API read", after.Spec.Paused, w.apiR.gets)
	}

	// The cache catches up: served from it again, and the tracker forgets.
	w.take(t, "web")
	again := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, again); err != nil {
		t.Fatal(err)
	}
	if !again.Spec.Paused || w.apiR.gets != 1 || w.reader.Tracker.Len() != 0 {
		t.Fatalf("after the cache caught up: paused=%v API reads=%d tracked=%d", again.Spec.Paused, w.apiR.gets, w.reader.Tracker.Len())
	}
}

func TestReader_aConflictSendsTheNextReadToTheAPIServer(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	stale := &appsv1.Deployment{}
	_ = w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, stale)
	// Someone else writes: the cache lags.
	other := stale.DeepCopy()
	other.Labels = map[string]string{"by": "flux"}
	if err := w.api.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	base := stale.DeepCopy()
	stale.Spec.Paused = true
	err := w.client.Patch(ctx, stale, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if !apierrors.IsConflict(err) {
		t.Fatalf("patch on a stale copy: %v, want a conflict", err)
	}
	fresh := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, fresh); err != nil {
		t.Fatal(err)
	}
	if fresh.Labels["by"] != "flux" || w.apiR.gets != 1 {
		t.Fatalf("after a conflict: labels=%v API reads=%d, want Flux's copy from the API server", fresh.Labels, w.apiR.gets)
	}
}

func TestReader_aDeletedObjectIsNotServedFromTheCache(t *testing.T) {
	ctx := context.Background()
	d := deployment("web")
	d.UID = "u1"
	w := newWorld(t, d)
	if err := w.client.Delete(ctx, d.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) || w.apiR.gets != 1 {
		t.Fatalf("after an own delete: %v with %d API reads, want not found from the API server", err, w.apiR.gets)
	}
}

func TestReader_kindsNotCachedAlwaysReadTheAPIServer(t *testing.T) {
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token"}}
	w := newWorld(t, s)
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "token"}, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	if w.apiR.gets != 1 {
		t.Fatalf("a Secret read %d times from the API server, want 1", w.apiR.gets)
	}
}

func TestClient_aWriteWithUnknownOutcomeWaitsForAnAPIRead(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	w.client.Client = interceptor.NewClient(w.api, interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		return errors.New("connection reset")
	}})
	d := deployment("web")
	_ = w.client.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{}`)))
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, &appsv1.Deployment{}); err != nil {
		t.Fatal(err)
	}
	if w.apiR.gets != 1 {
		t.Fatalf("after a write of unknown outcome: %d API reads, want 1", w.apiR.gets)
	}
}

// A cached list that still shows an object the manager deleted (the watch
// event of the delete has not arrived) is not served: what is decided on
// it (the next pods to delete) would count the deleted one as running.
// The list comes from the API server until the cache shows the delete.
func TestReader_aListOlderThanAnOwnDeleteComesFromTheAPIServer(t *testing.T) {
	ctx := context.Background()
	a, b := deployment("a"), deployment("b")
	a.UID, b.UID = "ua", "ub"
	w := newWorld(t, a, b)
	list := &appsv1.DeploymentList{}
	if err := w.reader.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 0 || len(list.Items) != 2 {
		t.Fatalf("a list nobody wrote: %d items, %d API lists, want 2 from the cache", len(list.Items), w.apiR.lists)
	}
	if err := w.client.Delete(ctx, a.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := w.reader.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 1 || len(list.Items) != 1 || list.Items[0].Name != "b" {
		t.Fatalf("after an own delete the cache has not seen: %d items, %d API lists, want b alone from the API server", len(list.Items), w.apiR.lists)
	}
	// Another namespace's list does not wait for it.
	if err := w.reader.List(ctx, list, client.InNamespace("other")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 1 {
		t.Fatalf("a list of another namespace went to the API server")
	}
	// The cache shows the object leaving (its grace period): caught up.
	leaving := a.DeepCopy()
	now := metav1.Now()
	leaving.DeletionTimestamp = &now
	w.cache.objs["a"] = leaving
	if err := w.reader.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 1 || len(list.Items) != 2 || w.reader.Tracker.Len() != 0 {
		t.Fatalf("with the delete in the cache: %d items, %d API lists, %d tracked, want the cache's 2 and nothing tracked", len(list.Items), w.apiR.lists, w.reader.Tracker.Len())
	}
}

// A cached list older than an own write of one of its objects is not
// served either; once the cache holds the written copy it is.
func TestReader_aListOlderThanAnOwnWriteComesFromTheAPIServer(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	d := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Paused = true
	if err := w.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	list := &appsv1.DeploymentList{}
	if err := w.reader.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 1 || len(list.Items) != 1 || !list.Items[0].Spec.Paused {
		t.Fatalf("after an own write: %d API lists, items %v, want the written copy from the API server", w.apiR.lists, list.Items)
	}
	w.take(t, "web")
	if err := w.reader.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if w.apiR.lists != 1 || !list.Items[0].Spec.Paused || w.reader.Tracker.Len() != 0 {
		t.Fatalf("after the cache caught up: %d API lists, %d tracked", w.apiR.lists, w.reader.Tracker.Len())
	}
}

func TestReader_fromAPIServerBypassesACaughtUpCache(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	// Someone else writes; the cache has not seen it and sluice wrote
	// nothing, so a plain read is served the older copy.
	cur := &appsv1.Deployment{}
	if err := w.api.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, cur); err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"by": "kube-controller-manager"}
	if err := w.api.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	cached := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, cached); err != nil {
		t.Fatal(err)
	}
	if cached.Labels["by"] != "" || w.apiR.gets != 0 {
		t.Fatalf("plain read: labels=%v API reads=%d, want the cached copy", cached.Labels, w.apiR.gets)
	}
	fresh := &appsv1.Deployment{}
	if err := w.reader.Get(FromAPIServer(ctx), client.ObjectKey{Namespace: "ns", Name: "web"}, fresh); err != nil {
		t.Fatal(err)
	}
	if fresh.Labels["by"] != "kube-controller-manager" || w.apiR.gets != 1 {
		t.Fatalf("read from the API server: labels=%v API reads=%d", fresh.Labels, w.apiR.gets)
	}
}

func TestReader_aGatedKindReadsTheAPIServerUntilItsGateOpens(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, deployment("web"))
	gate := &Gate{}
	w.reader.Cached = nil
	w.reader.Gated = map[schema.GroupVersionKind]*Gate{deployments: gate}
	key := client.ObjectKey{Namespace: "ns", Name: "web"}
	read := func(want int, what string) {
		t.Helper()
		before := w.apiR.gets + w.apiR.lists
		if err := w.reader.Get(ctx, key, &appsv1.Deployment{}); err != nil {
			t.Fatal(err)
		}
		if err := w.reader.List(ctx, &appsv1.DeploymentList{}, client.InNamespace("ns")); err != nil {
			t.Fatal(err)
		}
		if got := w.apiR.gets + w.apiR.lists - before; got != want {
			t.Fatalf("%s: a Get and a List made %d API reads, want %d", what, got, want)
		}
	}
	read(2, "gate closed")
	gate.Open()
	read(0, "gate open")
	gate.Close()
	read(2, "gate closed again")
}

// metadataCache is a cache holding Services as metadata only: it shows
// each as it was when the test last called take.
type metadataCache struct {
	client.Reader
	objs map[string]metav1.PartialObjectMetadata
}

func (m *metadataCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	out, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return errors.New("the cache holds Services as metadata only")
	}
	out.Items = nil
	for _, o := range m.objs {
		out.Items = append(out.Items, *o.DeepCopy())
	}
	return nil
}

func (m *metadataCache) take(t *testing.T, api client.Reader, name string) {
	t.Helper()
	svc := &corev1.Service{}
	if err := api.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	m.objs[name] = metav1.PartialObjectMetadata{ObjectMeta: *svc.ObjectMeta.DeepCopy()}
}

// A kind the cache holds as metadata only serves metadata lists from the
// cache, under the same rule as typed kinds (not while an own write is
// newer than the cached copy), and its typed reads from the API server.
func TestReader_metadataOnlyKindServesMetadataReadsFromTheCache(t *testing.T) {
	ctx := context.Background()
	services := corev1.SchemeGroupVersion.WithKind("Service")
	api := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithObjects(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}).Build()
	cache := &metadataCache{objs: map[string]metav1.PartialObjectMetadata{}}
	cache.take(t, api, "web")
	apiR := &countingReader{Reader: api}
	tr := NewTracker()
	r := &Reader{Cache: cache, API: apiR, Tracker: tr, Scheme: api, Metadata: map[schema.GroupVersionKind]bool{services: true}}
	list := func() *metav1.PartialObjectMetadataList {
		t.Helper()
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		if err := r.List(ctx, l, client.InNamespace("ns")); err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := list(); apiR.lists != 0 || len(l.Items) != 1 {
		t.Fatalf("metadata list: %d API lists, %d items; want the cache's one", apiR.lists, len(l.Items))
	}
	if err := r.List(ctx, &corev1.ServiceList{}, client.InNamespace("ns")); err != nil || apiR.lists != 1 {
		t.Fatalf("typed list: %v, %d API lists; want it read from the API server", err, apiR.lists)
	}
	svc := &corev1.Service{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, svc); err != nil || apiR.gets != 1 {
		t.Fatalf("typed get: %v, %d API gets; want it read from the API server", err, apiR.gets)
	}
	patch := client.MergeFrom(svc.DeepCopy())
	svc.Annotations = map[string]string{"sluice.dev/narrowed": "web"}
	if err := NewClient(api, tr).Patch(ctx, svc, patch); err != nil {
		t.Fatal(err)
	}
	if l := list(); apiR.lists != 2 || l.Items[0].Annotations["sluice.dev/narrowed"] != "web" {
		t.Fatalf("after an own write: %d API lists, annotations %v; want the written copy from the API server", apiR.lists, l.Items[0].Annotations)
	}
	cache.take(t, api, "web")
	if l := list(); apiR.lists != 2 || l.Items[0].Annotations["sluice.dev/narrowed"] != "web" {
		t.Fatalf("after the cache caught up: %d API lists; want the cache's copy", apiR.lists)
	}
}

// With CacheOnly, a Get the cache cannot serve yet because of an own write
// says so (ErrBehind) instead of reading the API server, unless the write's
// outcome is unknown or the cache has not met it for maxWait.
func TestReader_cacheOnlyWaitsForTheCacheInsteadOfReadingTheAPIServer(t *testing.T) {
	ctx := CacheOnly(context.Background())
	w := newWorld(t, deployment("web"))
	d := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, d); err != nil || w.apiR.gets != 0 {
		t.Fatalf("nothing written: %v, %d API gets; want the cache's copy", err, w.apiR.gets)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Paused = true
	if err := w.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	got := &appsv1.Deployment{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, got); !errors.Is(err, ErrBehind) || w.apiR.gets != 0 {
		t.Fatalf("behind an own write: %v, %d API gets; want ErrBehind and no API read", err, w.apiR.gets)
	}
	if err := w.reader.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil || w.apiR.gets != 1 || !got.Spec.Paused {
		t.Fatalf("without CacheOnly: %v, %d API gets; want the written copy from the API server", err, w.apiR.gets)
	}
	// The read from the API server raised the expectation to what it
	// read: still behind, and old now.
	k := key{gk: deployments.GroupKind(), name: types.NamespacedName{Namespace: "ns", Name: "web"}}
	w.reader.Tracker.mu.Lock()
	e := w.reader.Tracker.want[k]
	e.at = e.at.Add(-maxWait)
	w.reader.Tracker.want[k] = e
	w.reader.Tracker.mu.Unlock()
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil || w.apiR.gets != 2 {
		t.Fatalf("behind for %s: %v, %d API gets; want the API server to answer", maxWait, err, w.apiR.gets)
	}
	w.reader.Tracker.lost(k)
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil || w.apiR.gets != 3 {
		t.Fatalf("a write of unknown outcome: %v, %d API gets; want the API server to answer", err, w.apiR.gets)
	}
	w.take(t, "web")
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil || w.apiR.gets != 3 || !got.Spec.Paused {
		t.Fatalf("cache caught up: %v, %d API gets; want the cache's copy", err, w.apiR.gets)
	}
}
