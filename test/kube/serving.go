package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Serving watches, every 50 ms, every Service of a namespace that a user
// created (sluice's canary Services, which carry an owner reference, are
// left out) and records each moment one selects no ready pod: what a
// client of that Service would see as an outage.
type Serving struct {
	c      client.Reader
	ns     string
	mu     sync.Mutex
	gaps   []string
	checks int
	stop   context.CancelFunc
	done   chan struct{}
}

// WatchServing starts watching the Services of ns; the watch ends with
// AssertAlwaysServed, End or the test.
func WatchServing(t testing.TB, c client.Reader, ns string) *Serving {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Serving{c: c, ns: ns, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			m.check(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(m.End)
	return m
}

func (m *Serving) check(ctx context.Context) {
	svcs := &corev1.ServiceList{}
	pods := &corev1.PodList{}
	if m.c.List(ctx, svcs, client.InNamespace(m.ns)) != nil || m.c.List(ctx, pods, client.InNamespace(m.ns)) != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checks++
	for _, svc := range svcs.Items {
		if len(svc.OwnerReferences) > 0 {
			continue // sluice's canary Service
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		ready := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) && PodReady(p) {
				ready++
			}
		}
		if ready == 0 {
			m.gaps = append(m.gaps, fmt.Sprintf("%s Service %s (selector %v) selects no ready pod",
				time.Now().Format("15:04:05.000"), svc.Name, svc.Spec.Selector))
		}
	}
}

// End stops the watch.
func (m *Serving) End() {
	m.stop()
	<-m.done
}

// AssertAlwaysServed stops the watch and fails the test with the moments
// a Service selected no ready pod.
func (m *Serving) AssertAlwaysServed(t testing.TB) {
	t.Helper()
	m.End()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.checks == 0 {
		t.Fatal("the Services were never checked")
	}
	if len(m.gaps) > 0 {
		n := min(len(m.gaps), 5)
		t.Errorf("%d of %d checks found a Service without a ready pod, first: %s", len(m.gaps), m.checks, strings.Join(m.gaps[:n], "; "))
	}
}

// PodReady reports whether p's Ready condition is true.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
