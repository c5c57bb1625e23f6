package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// capacityMonitor watches an app during a release and records the largest
// total its ReplicaSets asked for and the fewest ready pods it had. The
// upper bound samples what maxSurge governs, ReplicaSet sizes (pod-level
// counts see transients that Kubernetes' own rolling updates have too: a
// pod created by one ReplicaSet before another has removed the one it
// scaled away). The lower bound counts the pods themselves: the ReplicaSets'
// status.readyReplicas are written one ReplicaSet at a time, so a sample of
// them can miss pods that are ready, and a busy machine widens that lag.
type capacityMonitor struct {
	mu                sync.Mutex
	maxPods, minReady int
	cancel            context.CancelFunc
	done              chan struct{}
}

// watchCapacity samples the app's ReplicaSets every 50ms until stopped.
func watchCapacity(t *testing.T, ns, app string) *capacityMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &capacityMonitor{minReady: 1 << 30, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			sets := &appsv1.ReplicaSetList{}
			if err := suite.c.List(ctx, sets, client.InNamespace(ns), client.MatchingLabels{"app": app}); err == nil {
				pods := 0
				for _, rs := range sets.Items {
					pods += int(*rs.Spec.Replicas)
				}
				m.mu.Lock()
				m.maxPods = max(m.maxPods, pods)
				m.mu.Unlock()
			}
			list := &corev1.PodList{}
			if err := suite.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err == nil {
				ready := 0
				for i := range list.Items {
					if p := &list.Items[i]; p.DeletionTimestamp == nil && podReady(p) {
						ready++
					}
				}
				m.mu.Lock()
				m.minReady = min(m.minReady, ready)
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
