package eventtime

import (
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFirstLastCount(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(t0.Add(d)) }
	tests := []struct {
		name        string
		e           eventsv1.Event
		first, last time.Duration
		count       int32
	}{
		{name: "events.k8s.io with a series", e: eventsv1.Event{EventTime: micro(0),
			Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: micro(time.Minute)}}, last: time.Minute, count: 4},
		{name: "events.k8s.io once", e: eventsv1.Event{EventTime: micro(time.Second)}, first: time.Second, last: time.Second, count: 1},
		{name: "core v1 fields", e: eventsv1.Event{DeprecatedFirstTimestamp: at(0), DeprecatedLastTimestamp: at(2 * time.Minute),
			DeprecatedCount: 3}, last: 2 * time.Minute, count: 3},
		{name: "only the object's creation", e: eventsv1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(5 * time.Second)}},
			first: 5 * time.Second, last: 5 * time.Second, count: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := First(&tt.e); !got.Equal(t0.Add(tt.first)) {
				t.Errorf("First = %s, want %s", got, t0.Add(tt.first))
			}
			if got := Last(&tt.e); !got.Equal(t0.Add(tt.last)) {
				t.Errorf("Last = %s, want %s", got, t0.Add(tt.last))
			}
			if got := Count(&tt.e); got != tt.count {
				t.Errorf("Count = %d, want %d", got, tt.count)
			}
		})
	}
}
