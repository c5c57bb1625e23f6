package recovery

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// laggingCache is the informer cache of the manager, behind the API
// server: once pinned at a resourceVersion it lists pods as the API server
// held them then (the watch events after it have not arrived), exactly as
// an informer whose watch is that far behind shows them. Everything else
// it reads live.
type laggingCache struct {
	client.Reader
	mu  sync.Mutex
	pin string
}

func (l *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l.mu.Lock()
	pin := l.pin
	l.mu.Unlock()
	if _, pods := list.(*corev1.PodList); pods && pin != "" {
		opts = append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pin, ResourceVersionMatch: metav1.ResourceVersionMatchExact}})
	}
	return l.Reader.List(ctx, list, opts...)
}

func (l *laggingCache) pinAt(rv string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pin = rv
}

// deleteRacer is the client sluice's DaemonSet adapter writes through. Its
// first pod deletion is preceded by race, someone else's write, so that it
// lands between the adapter's read and its delete. It records the pods it
// deleted.
type deleteRacer struct {
	client.Client
	race func(ctx context.Context, deleting *corev1.Pod) error

	mu      sync.Mutex
	fired   bool
	deleted []string
}

func (c *deleteRacer) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return c.Client.Delete(ctx, obj, opts...)
	}
	c.mu.Lock()
	fire := !c.fired && c.race != nil
	c.fired = c.fired || fire
	c.mu.Unlock()
	if fire {
		if err := c.race(ctx, pod); err != nil {
			return fmt.Errorf("racing write: %w", err)
		}
	}
	err := c.Client.Delete(ctx, obj, opts...)
	if err == nil {
		c.mu.Lock()
		c.deleted = append(c.deleted, pod.Name)
		c.mu.Unlock()
	}
	return err
}

func (c *deleteRacer) deletions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deleted...)
}

// daemonSetRace is a DaemonSet "web" of one pod per node on web:v1, held
// for a release of web:v2 by a DaemonSet adapter that reads through the
// manager's own reader (ownwrites) over cache and writes through racer.
type daemonSetRace struct {
	ns    string
	cache *laggingCache
	racer *deleteRacer
	rel   workload.Releaser
}

func newDaemonSetRace(t *testing.T, prefix string) *daemonSetRace {
	t.Helper()
	ctx := ctxFor(t)
	d := &daemonSetRace{ns: newNamespace(t, prefix), cache: &laggingCache{Reader: suite.c}}
	labels := map[string]string{"app": "web"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: "web"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podSpec("web:v1", labels)},
	}
	if err := suite.c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: d.ns, Name: "web"}
	eventually(t, "every node runs a ready pod of web:v1", func() (bool, string) {
		got := &appsv1.DaemonSet{}
		if err := suite.c.Get(ctx, key, got); err != nil {
			return false, err.Error()
		}
		s := got.Status
		return s.DesiredNumberScheduled > 1 && s.NumberReady == s.DesiredNumberScheduled && s.UpdatedNumberScheduled == s.DesiredNumberScheduled, fmt.Sprintf("%+v", s)
	})
	tracker := ownwrites.NewTracker()
	d.racer = &deleteRacer{Client: ownwrites.NewClient(suite.c, tracker)}
	reader := &ownwrites.Reader{Cache: d.cache, API: suite.c, Tracker: tracker, Scheme: suite.c, Cached: map[schema.GroupVersionKind]bool{
		corev1.SchemeGroupVersion.WithKind("Pod"):       true,
		appsv1.SchemeGroupVersion.WithKind("DaemonSet"): true,
	}}
	ref := rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "web"}
	var err error
	if d.rel, err = kinds.New(d.racer, reader, workload.Target{Namespace: d.ns, Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if err := d.rel.Claim(ctx, workload.Owner{BatchRelease: "web", Rollout: "web", Ref: ref}); err != nil {
		t.Fatal(err)
	}
	if err := setImage(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: "web"}}, "web:v2"); err != nil {
		t.Fatal(err)
	}
	return d
}

// pods lists the DaemonSet's pods from the API server, by node name.
func (d *daemonSetRace) pods(t *testing.T) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(d.ns), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Spec.NodeName < pods.Items[j].Spec.NodeName })
	return pods.Items
}

// firstBatch calls UpgradeBatch for one pod until the adapter deletes one
// (the DaemonSet controller must have seen the new template first).
func (d *daemonSetRace) firstBatch(t *testing.T) error {
	t.Helper()
	var last error
	eventually(t, "the first pod of the batch deleted", func() (bool, string) {
		_, last = d.rel.UpgradeBatch(ctxFor(t), 1)
		d.racer.mu.Lock()
		fired := d.racer.fired
		d.racer.mu.Unlock()
		return fired, fmt.Sprint("no deletion yet; last error: ", last)
	})
	return last
}

func setPodReady(ctx context.Context, pod *corev1.Pod, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q}]}}`, status)
	return suite.c.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

// Given a DaemonSet held for a release, its batch of one pod just deleted
// by sluice, and the manager's cache one event behind that delete: it
// still shows the deleted pod running, and shows that another pod has just
// become unready
// When the batch is looked at again (the next reconcile)
// Then no other pod is deleted: the list the decision rests on is never
// older than sluice's own delete (it comes from the API server until the
// cache has caught up), so the batch of one replaces one pod, not two.
func TestUpgradeBatch_daemonSet_cacheBehindItsOwnDelete_deletesNoMorePods(t *testing.T) {
	ctx := ctxFor(t)
	d := newDaemonSetRace(t, "race-ds-cache")
	d.racer.race = func(ctx context.Context, deleting *corev1.Pod) error {
		// Another pod fails its readiness probe just before sluice's delete
		// lands; the cache receives that event, not the delete.
		pods := d.pods(t)
		other := &pods[len(pods)-1] // the last in node order: sluice deletes the first
		if other.Name == deleting.Name {
			return fmt.Errorf("sluice deleted %s, the last pod in node order, first", deleting.Name)
		}
		if err := setPodReady(ctx, other, false); err != nil {
			return err
		}
		d.cache.pinAt(other.ResourceVersion)
		return nil
	}
	if err := d.firstBatch(t); err != nil {
		t.Fatalf("the first batch: %v", err)
	}
	for range 3 {
		if _, err := d.rel.UpgradeBatch(ctx, 1); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("the batch looked at again: %v", err)
		}
	}
	if got := d.racer.deletions(); len(got) != 1 {
		t.Fatalf("a batch of one pod deleted %d pods (%v) on a cache that had not seen its first delete", len(got), got)
	}
}

// Given a DaemonSet held for a release, whose batch is about to delete a
// pod
// When that pod changes between sluice's read and its delete (here it
// becomes unready)
// Then the delete does not happen on the stale read: it fails with a
// conflict, and UpgradeBatch says so, so that the batch is planned again
// from a fresh read.
func TestUpgradeBatch_daemonSet_podChangedBeforeItsDelete_conflicts(t *testing.T) {
	d := newDaemonSetRace(t, "race-ds-pod")
	d.racer.race = func(ctx context.Context, deleting *corev1.Pod) error {
		p := &corev1.Pod{}
		if err := suite.c.Get(ctx, client.ObjectKeyFromObject(deleting), p); err != nil {
			return err
		}
		return setPodReady(ctx, p, false)
	}
	err := d.firstBatch(t)
	if !apierrors.IsConflict(err) {
		t.Fatalf("UpgradeBatch after the pod changed: %v, want a conflict", err)
	}
	if got := d.racer.deletions(); len(got) != 0 {
		t.Fatalf("pods %v deleted on a read older than their last change", got)
	}
}
