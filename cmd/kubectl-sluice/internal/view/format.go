// Package view renders what the plugin shows: the table of `get rollouts`,
// the page of `status`, the lines of `history`. Every function here is pure:
// it takes what the commands read from the cluster (and the time) and
// writes text, so each view is table-tested without a cluster.
package view

import (
	"sort"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/sluice-dev/sluice/observability/eventtime"
)

// none is what a cell or field shows when there is nothing to show.
const none = "-"

// Age is how long ago t was, the way kubectl prints ages ("5m", "2d3h");
// none for a zero time.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return none
	}
	return duration.HumanDuration(now.Sub(t))
}

// Timestamp prints t for history lines: UTC, to the second.
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return "unknown time        "
	}
	return t.UTC().Format(time.RFC3339)
}

// sortEvents orders events by when they last happened, oldest first.
func sortEvents(events []eventsv1.Event) []eventsv1.Event {
	out := append([]eventsv1.Event(nil), events...)
	sort.SliceStable(out, func(i, j int) bool { return eventtime.Last(&out[i]).Before(eventtime.Last(&out[j])) })
	return out
}
