package settle

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// recordingQueue records what is added to it, and when after.
type recordingQueue struct {
	queue
	now   []ctrl.Request
	after map[ctrl.Request]time.Duration
}

func (q *recordingQueue) Add(r ctrl.Request) { q.now = append(q.now, r) }

func (q *recordingQueue) AddAfter(r ctrl.Request, d time.Duration) { q.after[r] = d }

func TestDelayed_queuesWhatTheHandlerMapsAfterDelay(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}}
	want := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: "web"}}
	h := Delayed(handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []ctrl.Request {
		return []ctrl.Request{want}
	}))
	q := &recordingQueue{after: map[ctrl.Request]time.Duration{}}
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: pod, ObjectNew: pod.DeepCopy()}, q)
	h.Create(context.Background(), event.CreateEvent{Object: pod}, q)
	if len(q.now) != 0 {
		t.Fatalf("queued at once: %v", q.now)
	}
	if d, ok := q.after[want]; !ok || d != Delay || len(q.after) != 1 {
		t.Fatalf("queued after %v, want %s after %s", q.after, want, Delay)
	}
}
