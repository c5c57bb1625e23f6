// Package view renders what the plugin shows: the table of `get rollouts`,
// the page of `status`, the lines of `history`. Every function here is pure:
// it takes what the commands read from the cluster (and the time) and
// writes text, so each view is table-tested without a cluster.
package view

import (
	"fmt"
	"sort"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/eventtime"
	"github.com/sluice-dev/sluice/release/batch"
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

// Pause describes how a step waits once done. last and releasesAll make
// the last step that releases every pod say that it does not pause.
func Pause(p rolloutsv1beta1.RolloutPause, last, releasesAll bool) string {
	switch {
	case last && releasesAll:
		return "none (last step)"
	case p.Duration == nil:
		return "until approved"
	case *p.Duration == 0:
		return "none"
	}
	return fmt.Sprintf("%ds", *p.Duration)
}

// StepReplicas is a step's replicas as written ("1", "50%"); a step
// without replicas releases every pod.
func StepReplicas(s rolloutsv1beta1.CanaryStep) string {
	if s.Replicas == nil {
		return "100%"
	}
	return s.Replicas.String()
}

// releasesAll reports whether step releases all of replicas pods; false
// when replicas is unknown (0).
func releasesAll(s rolloutsv1beta1.CanaryStep, replicas int32) bool {
	if replicas <= 0 {
		return s.Replicas == nil || s.Replicas.String() == "100%"
	}
	n, err := batch.DesiredUpdated(s.Replicas, replicas)
	return err == nil && n >= replicas
}

// Traffic describes the traffic part of a step, or "" when it has none.
func Traffic(s rolloutsv1beta1.CanaryStep) string {
	var out string
	if s.Traffic != nil {
		out = "traffic " + *s.Traffic
	}
	if n := len(s.Matches); n > 0 {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%d request match(es)", n)
	}
	if s.RequestHeaderModifier != nil {
		if out != "" {
			out += ", "
		}
		out += "header modifier"
	}
	return out
}

// sortEvents orders events by when they last happened, oldest first.
func sortEvents(events []eventsv1.Event) []eventsv1.Event {
	out := append([]eventsv1.Event(nil), events...)
	sort.SliceStable(out, func(i, j int) bool { return eventtime.Last(&out[i]).Before(eventtime.Last(&out[j])) })
	return out
}
