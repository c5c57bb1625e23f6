package main

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	writes map[string][]time.Time // app -> times
	gens   map[string]string      // kind/name -> generation and annotations seen
	// intents are, per app, when the GitGate's sluice.dev/approve or
	// sluice.dev/abort on the Rollout changed.
	intents map[string][]time.Time
}

func newWriteWatch(c client.WithWatch, ns string) *writeWatch {
	return &writeWatch{c: c, ns: ns, writes: map[string][]time.Time{}, gens: map[string]string{}, intents: map[string][]time.Time{}}
}

// start lists the workloads (the baseline) and watches them from there
// until the returned stop is called.
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
	dw, err := w.c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(w.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: ds.ResourceVersion}})
	if err != nil {
		cancel()
		return nil, err
	}
	rw, err := w.c.Watch(ctx, &appsv1.ReplicaSetList{}, client.InNamespace(w.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rss.ResourceVersion}})
	if err != nil {
		dw.Stop()
		cancel()
		return nil, err
	}
	ow, err := w.c.Watch(ctx, &rolloutsv1beta1.RolloutList{}, client.InNamespace(w.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: ros.ResourceVersion}})
	if err != nil {
		dw.Stop()
		rw.Stop()
		cancel()
		return nil, err
	}
	var wg sync.WaitGroup
	for _, ch := range []watch.Interface{dw, rw, ow} {
		wg.Go(func() {
			for ev := range ch.ResultChan() {
				if obj, ok := ev.Object.(client.Object); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					w.seen(obj, time.Now())
				}
			}
		})
	}
	return func() {
		dw.Stop()
		rw.Stop()
		ow.Stop()
		cancel()
		wg.Wait()
	}, nil
}

// seen records obj; a zero at is the baseline.
func (w *writeWatch) seen(obj client.Object, at time.Time) {
	var app, key, state string
	intent := false
	switch o := obj.(type) {
	case *rolloutsv1beta1.Rollout:
		app, key, intent = o.Name, "Rollout/"+o.Name, true
		state = o.Annotations[rolloutsv1beta1.ApproveAnnotation] + "\x00" + o.Annotations[rolloutsv1beta1.AbortAnnotation]
	case *appsv1.Deployment:
		app, key = o.Name, "Deployment/"+o.Name
		state = generationAndAnnotations(o.Generation, o.Annotations)
	case *appsv1.ReplicaSet:
		app, key = o.Labels["app"], "ReplicaSet/"+o.Name
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
