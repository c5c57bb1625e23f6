package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// capacityMonitor watches the pods of an app during a release and records
// the most pods that existed at once and the fewest that were ready.
type capacityMonitor struct {
	mu                sync.Mutex
	maxPods, minReady int
	cancel            context.CancelFunc
	done              chan struct{}
}

// watchCapacity samples the app's pods every 50ms until stopped.
func watchCapacity(t *testing.T, ns, app string) *capacityMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &capacityMonitor{minReady: 1 << 30, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			pods := &corev1.PodList{}
			if err := suite.c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err == nil {
				live, ready := 0, 0
				for _, p := range pods.Items {
					if p.DeletionTimestamp != nil {
						continue
					}
					live++
					for _, c := range p.Status.Conditions {
						if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
							ready++
						}
					}
				}
				m.mu.Lock()
				m.maxPods, m.minReady = max(m.maxPods, live), min(m.minReady, ready)
				m.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *capacityMonitor) stop() {
	m.cancel()
	<-m.done
}

// within checks the samples against the bounds a rolling update promises.
func (m *capacityMonitor) within(maxPods, minReady int) error {
	m.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maxPods > maxPods || m.minReady < minReady {
		return fmt.Errorf("saw up to %d pods (bound %d) and as few as %d ready (bound %d)", m.maxPods, maxPods, m.minReady, minReady)
	}
	return nil
}
