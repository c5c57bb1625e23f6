package main

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// writeWatch records, per app, when a write to its workload was seen: a
// Deployment whose generation or annotations changed, or a ReplicaSet of
// the app created or whose generation changed (what a batch or an abort
// writes; the status updates of Kubernetes' controllers change neither).
// Times are when the watch delivered the event.
type writeWatch struct {
	c  client.WithWatch
	ns string

	mu     sync.Mutex
	writes map[string][]time.Time // app ("namespace/name") -> times
	gens   map[string]string      // kind/name -> generation and annotations seen
	// intents are, per app, when sluice.dev/approve or sluice.dev/abort
	// on its Rollout changed.
	intents map[string][]time.Time
}

func newWriteWatch(c client.WithWatch, ns string) *writeWatch {
	return &writeWatch{c: c, ns: ns, writes: map[string][]time.Time{}, gens: map[string]string{}, intents: map[string][]time.Time{}}
}

// start lists the workloads of namespace ns ("": every namespace; apps
// are named "namespace/name") as the baseline, and watches them from
// there until the returned stop is called.
func (w *writeWatch) start(ctx context.Context) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	ds := &appsv1.DeploymentList{}
	if err := w.c.List(ctx, ds, client.InNamespace(w.ns)); err != nil {
		cancel()
		return nil, err
	}
	rss := &appsv1.ReplicaSetList{}
	if err := w.c.List(ctx, rss, client.InNamespace(w.ns)); err != nil {
		cancel()
		return nil, err
	}
	ros := &rolloutsv1beta1.RolloutList{}
	if err := w.c.List(ctx, ros, client.InNamespace(w.ns)); err != nil {
		cancel()
		return nil, err
	}
	for i := range ros.Items {
		w.seen(&ros.Items[i], time.Time{})
	}
	for i := range ds.Items {
		w.seen(&ds.Items[i], time.Time{})
	}
	for i := range rss.Items {
		w.seen(&rss.Items[i], time.Time{})
	}
	var wg sync.WaitGroup
	for _, k := range []struct {
		list client.ObjectList
		rv   string
	}{{&appsv1.DeploymentList{}, ds.ResourceVersion}, {&appsv1.ReplicaSetList{}, rss.ResourceVersion}, {&rolloutsv1beta1.RolloutList{}, ros.ResourceVersion}} {
		wg.Go(func() { w.follow(ctx, k.list, k.rv) })
	}
	return func() {
		cancel()
		wg.Wait()
	}, nil
}

// follow watches the kind of list from resourceVersion rv until ctx ends,
// watching again from the last version seen whenever the API server ends
// a watch (it does, after a while, and under load sooner): a write missed
// there would read as an approval that never came.
func (w *writeWatch) follow(ctx context.Context, list client.ObjectList, rv string) {
	for ctx.Err() == nil {
		wi, err := w.c.Watch(ctx, list, client.InNamespace(w.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		expired := false
		for ev := range wi.ResultChan() {
			obj, ok := ev.Object.(client.Object)
			if !ok {
				expired = true // an error event (410 Gone above all): list again
				break
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				w.seen(obj, time.Now())
			}
		}
		wi.Stop()
		if expired {
			rv = w.relist(ctx, list, rv)
		}
	}
}

// relist lists the kind of list again and records what changed since (at
// the time of the list: a late but never missed write), returning the
// list's resourceVersion (rv when the list failed).
func (w *writeWatch) relist(ctx context.Context, list client.ObjectList, rv string) string {
	fresh, ok := list.DeepCopyObject().(client.ObjectList)
	if !ok || w.c.List(ctx, fresh, client.InNamespace(w.ns)) != nil {
		return rv
	}
	items, err := meta.ExtractList(fresh)
	if err != nil {
		return rv
	}
	now := time.Now()
	for _, it := range items {
		if obj, ok := it.(client.Object); ok {
			w.seen(obj, now)
		}
	}
	return fresh.GetResourceVersion()
}

// seen records obj; a zero at is the baseline.
func (w *writeWatch) seen(obj client.Object, at time.Time) {
	var app, key, state string
	intent := false
	switch o := obj.(type) {
	case *rolloutsv1beta1.Rollout:
		app, key, intent = o.Namespace+"/"+o.Name, "Rollout/"+o.Namespace+"/"+o.Name, true
		state = o.Annotations[rolloutsv1beta1.ApproveAnnotation] + "\x00" + o.Annotations[rolloutsv1beta1.AbortAnnotation]
	case *appsv1.Deployment:
		app, key = o.Namespace+"/"+o.Name, "Deployment/"+o.Namespace+"/"+o.Name
		state = generationAndAnnotations(o.Generation, o.Annotations)
	case *appsv1.ReplicaSet:
		app, key = o.Namespace+"/"+o.Labels["app"], "ReplicaSet/"+o.Namespace+"/"+o.Name
		state = generationAndAnnotations(o.Generation, nil)
	default:
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	prev, known := w.gens[key]
	w.gens[key] = state
	if at.IsZero() || (known && prev == state) {
		return
	}
	if intent {
		w.intents[app] = append(w.intents[app], at)
		return
	}
	w.writes[app] = append(w.writes[app], at)
}

// firstIntentAfter is when the GitGate's intent for app was first seen on
// its Rollout after t.
func (w *writeWatch) firstIntentAfter(app string, t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return firstAfterIn(w.intents[app], t)
}

// firstAfter is the first write to app's workload seen after t.
func (w *writeWatch) firstAfter(app string, t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return firstAfterIn(w.writes[app], t)
}

func firstAfterIn(times []time.Time, t time.Time) (time.Time, bool) {
	for _, at := range times {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

func generationAndAnnotations(gen int64, ann map[string]string) string {
	out := strconv.FormatInt(gen, 10)
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		out += "\x00" + k + "=" + ann[k]
	}
	return out
}
