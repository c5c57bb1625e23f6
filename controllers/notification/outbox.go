package notification

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

// Bounds of what a Notifier's status keeps.
const (
	// maxQueued is how many transition keys are remembered per Rollout.
	maxQueued = 100
	// maxOutbox is how many notifications wait at most; past it the oldest
	// is given up on.
	maxOutbox = 100
	// maxDeliveries is how many outcomes the status lists.
	maxDeliveries = 20
	// MaxAttempts is how often a notification is tried before sluice gives
	// up on the sinks that keep failing (about 15 minutes of back-off).
	MaxAttempts = 10
	// maxBackoff caps the wait between two attempts.
	maxBackoff = 5 * time.Minute
)

// queue records the transitions implied for rollout: the first time the
// Notifier sees the Rollout they are only remembered (what happened before
// it was bound is not news); afterwards each one not remembered yet goes to
// the outbox, for every sink, if the spec wants its event. It returns the
// notifications queued.
func queue(st *notificationv1alpha1.NotifierStatus, spec *notificationv1alpha1.NotifierSpec, rollout string,
	implied []notificationv1alpha1.Notification) []notificationv1alpha1.Notification {
	rec := recordOf(st, rollout)
	first := rec == nil
	if first {
		st.Rollouts = append(st.Rollouts, notificationv1alpha1.NotifiedRollout{Name: rollout})
		rec = &st.Rollouts[len(st.Rollouts)-1]
	}
	var out []notificationv1alpha1.Notification
	for _, n := range implied {
		if slices.Contains(rec.Queued, n.Key) {
			continue
		}
		rec.Queued = append(rec.Queued, n.Key)
		rec.Release = n.Revision
		if first || !spec.Wants(n.Event) {
			continue
		}
		out = append(out, n)
		st.Outbox = append(st.Outbox, notificationv1alpha1.OutboxEntry{Notification: n, Sinks: sinkNames(spec)})
	}
	if n := len(rec.Queued); n > maxQueued {
		rec.Queued = append([]string(nil), rec.Queued[n-maxQueued:]...)
	}
	return out
}

// forget drops the records of Rollouts no longer bound.
func forget(st *notificationv1alpha1.NotifierStatus, bound map[string]bool) {
	out := st.Rollouts[:0]
	for _, r := range st.Rollouts {
		if bound[r.Name] {
			out = append(out, r)
		}
	}
	st.Rollouts = out
}

// overflow gives up on the oldest notifications past maxOutbox.
func overflow(st *notificationv1alpha1.NotifierStatus, now metav1.Time) {
	for len(st.Outbox) > maxOutbox {
		done(st, &st.Outbox[0], false, "the outbox is full", now)
		st.Outbox = st.Outbox[1:]
	}
}

// due reports whether e is to be tried at now.
func due(e *notificationv1alpha1.OutboxEntry, now time.Time) bool {
	return e.NextAttempt == nil || !now.Before(e.NextAttempt.Time)
}

// backoff is the wait after the attempts-th failed attempt: 1s, 2s, 4s...
// up to maxBackoff.
func backoff(attempts int32) time.Duration {
	d := time.Second
	for i := int32(1); i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// failed records a failed attempt of e: tried again after the back-off, or
// given up on once it was tried MaxAttempts times (it returns true then).
func failed(e *notificationv1alpha1.OutboxEntry, msg string, now metav1.Time) bool {
	e.Attempts++
	e.LastError = msg
	if e.Attempts >= MaxAttempts {
		return true
	}
	next := metav1.NewTime(now.Add(backoff(e.Attempts)))
	e.NextAttempt = &next
	return false
}

// done records e's outcome in the deliveries.
func done(st *notificationv1alpha1.NotifierStatus, e *notificationv1alpha1.OutboxEntry, delivered bool, msg string, now metav1.Time) {
	attempts := e.Attempts
	if delivered {
		attempts++
	}
	st.Deliveries = append(st.Deliveries, notificationv1alpha1.Delivery{
		Key: e.Notification.Key, Event: e.Notification.Event, Rollout: e.Notification.Rollout,
		Delivered: delivered, Attempts: attempts, At: now, Message: msg,
	})
	if n := len(st.Deliveries); n > maxDeliveries {
		st.Deliveries = append([]notificationv1alpha1.Delivery(nil), st.Deliveries[n-maxDeliveries:]...)
	}
}

func recordOf(st *notificationv1alpha1.NotifierStatus, name string) *notificationv1alpha1.NotifiedRollout {
	for i := range st.Rollouts {
		if st.Rollouts[i].Name == name {
			return &st.Rollouts[i]
		}
	}
	return nil
}

func sinkNames(spec *notificationv1alpha1.NotifierSpec) []string {
	out := make([]string, 0, len(spec.Sinks))
	for _, s := range spec.Sinks {
		out = append(out, s.Name)
	}
	return out
}
