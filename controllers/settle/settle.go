// Package settle turns bursts of watch events into one reconcile: it
// wraps an event handler so that what the handler queues is queued after
// a short delay, and the events of one object within that delay start a
// single reconcile (the queue keeps a key once).
package settle

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// Delay is how long an event waits before it starts a reconcile. A
// batch's pods each change several times (created, scheduled, running,
// ready), and each change is followed by a status write of their
// ReplicaSet and of the workload: at 100 Rollouts that was over 100
// reconciles of each BatchRelease per release, most of them finding
// nothing new to do. The controllers queue the changes of their own
// objects (an approval, an abort) at once, and those of the objects they
// follow through a Delayed handler.
const Delay = 150 * time.Millisecond

// queue is a controller's work queue.
type queue = workqueue.TypedRateLimitingInterface[ctrl.Request]

// delayedQueue turns each Add into an add after Delay. It is not a
// priority queue, so controller-runtime's handlers call its Add.
type delayedQueue struct{ queue }

// Add queues r after Delay.
func (q delayedQueue) Add(r ctrl.Request) { q.AddAfter(r, Delay) }

// Delayed returns h with every request it queues delayed by Delay.
func Delayed(h handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, q queue) { h.Create(ctx, e, delayedQueue{q}) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, q queue) { h.Update(ctx, e, delayedQueue{q}) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q queue) { h.Delete(ctx, e, delayedQueue{q}) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { h.Generic(ctx, e, delayedQueue{q}) },
	}
}
