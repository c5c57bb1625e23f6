// Package settle turns bursts of watch events into one reconcile: a
// handler that queues what it maps after a short delay, so that the
// events of one object within that delay start a single reconcile (the
// queue keeps a key once).
package settle

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
// follow through a settle handler.
const Delay = 150 * time.Millisecond

// Handler maps events with m, as handler.EnqueueRequestsFromMapFunc does,
// and queues what it finds after Delay.
func Handler(m handler.MapFunc) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[ctrl.Request]
	add := func(ctx context.Context, q queue, objs ...client.Object) {
		for _, o := range objs {
			if o == nil {
				continue
			}
			for _, req := range m(ctx, o) {
				q.AddAfter(req, Delay)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { add(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { add(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { add(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			add(ctx, q, e.Object)
		},
	}
}
