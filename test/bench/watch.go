package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// transition is one change of what a Rollout reports, as seen by the watch.
type transition struct {
	// At is when the watch delivered the change.
	At time.Time
	// State is describeRollout's summary of the Rollout.
	State string
}

// tracker watches the scenario's Rollouts and records when each completes
// the release of the revision it waits for.
type tracker struct {
	allDone chan struct{} // closed once every wanted release completed

	mu       sync.Mutex // guards the fields below
	want     map[string]string
	done     map[string]time.Time
	last     map[string]*rolloutsv1beta1.Rollout
	timeline map[string][]transition
}

// newTracker returns a tracker that waits for nothing yet.
func newTracker() *tracker {
	return &tracker{
		allDone:  make(chan struct{}),
		want:     map[string]string{},
		done:     map[string]time.Time{},
		last:     map[string]*rolloutsv1beta1.Rollout{},
		timeline: map[string][]transition{},
	}
}

// run lists and watches the Rollouts labelled with runID until ctx ends,
// listing again whenever the watch ends or fails.
func (t *tracker) run(ctx context.Context, c client.WithWatch, runID string) {
	sel := labels.SelectorFromSet(labels.Set{benchLabel: runID})
	for ctx.Err() == nil {
		list := &rolloutsv1beta1.RolloutList{}
		if err := c.List(ctx, list, &client.ListOptions{LabelSelector: sel}); err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		now := time.Now()
		for i := range list.Items {
			t.observe(&list.Items[i], now)
		}
		w, err := c.Watch(ctx, &rolloutsv1beta1.RolloutList{}, &client.ListOptions{LabelSelector: sel,
			Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		t.consume(w)
		w.Stop()
	}
}

// consume handles events until the watch ends or reports an error.
func (t *tracker) consume(w watch.Interface) {
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if ro, ok := ev.Object.(*rolloutsv1beta1.Rollout); ok {
				t.observe(ro, time.Now())
			}
		case watch.Error:
			return
		}
	}
}

// observe records what ro reports at time at.
func (t *tracker) observe(ro *rolloutsv1beta1.Rollout, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ns := ro.Namespace
	if prev := t.last[ns]; prev != nil && prev.ResourceVersion == ro.ResourceVersion {
		return
	}
	t.last[ns] = ro
	state := describeRollout(ro)
	if tl := t.timeline[ns]; len(tl) == 0 || tl[len(tl)-1].State != state {
		t.timeline[ns] = append(tl, transition{At: at, State: state})
	}
	t.check(ns, at)
}

// expect makes the tracker wait for the release of revision in each
// namespace; the releases may already be complete.
func (t *tracker) expect(revisions map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	for ns, rev := range revisions {
		t.want[ns] = rev
		t.check(ns, now)
	}
}

// check marks the release in ns done if the last Rollout seen completed
// it. The caller holds t.mu.
func (t *tracker) check(ns string, at time.Time) {
	want, ok := t.want[ns]
	if _, done := t.done[ns]; !ok || done || t.last[ns] == nil || !completed(t.last[ns], want) {
		return
	}
	t.done[ns] = at
	if len(t.done) == len(t.want) {
		close(t.allDone)
	}
}

// wait waits until every expected release completed, or fails after limit
// with what the unfinished Rollouts last reported.
func (t *tracker) wait(ctx context.Context, limit time.Duration) (map[string]time.Time, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-t.allDone:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		t.mu.Lock()
		defer t.mu.Unlock()
		var pending []string
		for ns := range t.want {
			if _, ok := t.done[ns]; !ok {
				pending = append(pending, ns+": "+describeRollout(t.last[ns]))
			}
		}
		return nil, fmt.Errorf("releases not completed after %s: %v", limit, pending)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(t.done))
	for ns, at := range t.done {
		out[ns] = at
	}
	return out, nil
}

// timelines returns a copy of the transitions recorded per namespace.
func (t *tracker) timelines() map[string][]transition {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string][]transition, len(t.timeline))
	for ns, tl := range t.timeline {
		out[ns] = append([]transition(nil), tl...)
	}
	return out
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
