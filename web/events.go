package web

import (
	"sort"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
)

// buildEvents turns the events regarding a Rollout into the timeline: the
// MaxEvents latest, oldest first.
func buildEvents(events []eventsv1.Event, now time.Time) []Event {
	sorted := append([]eventsv1.Event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return eventLast(&sorted[i]).Before(eventLast(&sorted[j])) })
	if len(sorted) > MaxEvents {
		sorted = sorted[len(sorted)-MaxEvents:]
	}
	out := make([]Event, 0, len(sorted))
	for i := range sorted {
		e := &sorted[i]
		last := eventLast(e)
		at := ""
		if !last.IsZero() {
			at = last.UTC().Format(time.RFC3339)
		}
		out = append(out, Event{Age: age(last, now), At: at, Type: e.Type, Reason: e.Reason,
			Message: strings.Join(strings.Fields(e.Note), " "), Count: eventCount(e)})
	}
	return out
}

// eventFirst is when an event first happened.
func eventFirst(e *eventsv1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedFirstTimestamp.IsZero():
		return e.DeprecatedFirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// eventLast is when an event last happened.
func eventLast(e *eventsv1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return eventFirst(e)
}

// eventCount is how many times an event happened.
func eventCount(e *eventsv1.Event) int32 {
	switch {
	case e.Series != nil && e.Series.Count > 0:
		return e.Series.Count
	case e.DeprecatedCount > 0:
		return e.DeprecatedCount
	}
	return 1
}
