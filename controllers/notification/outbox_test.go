package notification

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nv1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

func notes(keys ...string) []nv1.Notification {
	var out []nv1.Notification
	for _, k := range keys {
		out = append(out, nv1.Notification{Key: k, Event: nv1.EventStepPaused, Rollout: "checkout"})
	}
	return out
}

func TestQueue(t *testing.T) {
	spec := &nv1.NotifierSpec{Sinks: []nv1.Sink{{Name: "hook"}, {Name: "chat"}}}
	st := &nv1.NotifierStatus{}
	if got := queue(st, spec, "checkout", notes("a", "b")); len(got) != 0 || len(st.Outbox) != 0 {
		t.Fatalf("first sight queued %v: what happened before the Notifier bound the Rollout is not news", got)
	}
	got := queue(st, spec, "checkout", notes("a", "b", "c"))
	if len(got) != 1 || got[0].Key != "c" || len(st.Outbox) != 1 || len(st.Outbox[0].Sinks) != 2 {
		t.Fatalf("queued %v, outbox %+v: want c, for both sinks", got, st.Outbox)
	}
	if got := queue(st, spec, "checkout", notes("a", "b", "c")); len(got) != 0 {
		t.Fatalf("queued %v again", got)
	}
	spec.Events = []nv1.Event{nv1.EventCompleted}
	if got := queue(st, spec, "checkout", notes("d")); len(got) != 0 {
		t.Fatalf("queued %v: the spec does not want StepPaused", got)
	}
	if r := recordOf(st, "checkout"); len(r.Queued) != 4 {
		t.Fatalf("remembered %v", r.Queued)
	}
}

func TestBackoff(t *testing.T) {
	for attempts, want := range map[int32]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 9: 256 * time.Second, 10: maxBackoff, 30: maxBackoff} {
		if got := backoff(attempts); got != want {
			t.Errorf("backoff(%d) = %s, want %s", attempts, got, want)
		}
	}
}

func TestFailedThenDone(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	e := &nv1.OutboxEntry{Notification: nv1.Notification{Key: "k"}}
	for i := int32(1); i < MaxAttempts; i++ {
		if failed(e, "503", now) {
			t.Fatalf("gave up after %d attempts", i)
		}
		if want := now.Add(backoff(i)); !e.NextAttempt.Time.Equal(want) || due(e, now.Time) || !due(e, want) {
			t.Fatalf("attempt %d: next %s, want %s", i, e.NextAttempt, want)
		}
	}
	if !failed(e, "503", now) {
		t.Fatal("did not give up after MaxAttempts")
	}
	st := &nv1.NotifierStatus{}
	done(st, e, false, "gave up", now)
	if len(st.Deliveries) != 1 || st.Deliveries[0].Delivered || st.Deliveries[0].Attempts != MaxAttempts {
		t.Fatalf("deliveries %+v", st.Deliveries)
	}
}

func TestOverflow_givesUpOnTheOldest(t *testing.T) {
	st := &nv1.NotifierStatus{}
	for i := 0; i < maxOutbox+2; i++ {
		st.Outbox = append(st.Outbox, nv1.OutboxEntry{Notification: nv1.Notification{Key: string(rune('a' + i%26))}})
	}
	overflow(st, metav1.Now())
	if len(st.Outbox) != maxOutbox || len(st.Deliveries) != 2 || st.Deliveries[0].Message != "the outbox is full" {
		t.Fatalf("outbox %d, deliveries %+v", len(st.Outbox), st.Deliveries)
	}
}
