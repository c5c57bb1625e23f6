package web

import (
	"sort"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/sluice-dev/sluice/observability/eventtime"
)

// buildEvents turns the events regarding a Rollout into the timeline: the
// MaxEvents latest, oldest first.
func buildEvents(events []eventsv1.Event, now time.Time) []Event {
	sorted := append([]eventsv1.Event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return eventtime.Last(&sorted[i]).Before(eventtime.Last(&sorted[j])) })
	if len(sorted) > MaxEvents {
		sorted = sorted[len(sorted)-MaxEvents:]
	}
	out := make([]Event, 0, len(sorted))
	for i := range sorted {
		e := &sorted[i]
		last := eventtime.Last(e)
		at := ""
		if !last.IsZero() {
			at = last.UTC().Format(time.RFC3339)
		}
		out = append(out, Event{Age: age(last, now), At: at, Type: e.Type, Reason: e.Reason,
			Message: strings.Join(strings.Fields(e.Note), " "), Count: eventtime.Count(e)})
	}
	return out
}
