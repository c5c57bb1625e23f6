// Package eventtime reads when a Kubernetes event happened and how often,
// whichever API wrote it: events.k8s.io/v1 (eventTime and series) or the
// core v1 fields it keeps as deprecated ones. kubectl sluice and the web
// view show events through it.
package eventtime

import (
	"time"

	eventsv1 "k8s.io/api/events/v1"
)

// First is when e first happened.
func First(e *eventsv1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedFirstTimestamp.IsZero():
		return e.DeprecatedFirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// Last is when e last happened.
func Last(e *eventsv1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return First(e)
}

// Count is how many times e happened.
func Count(e *eventsv1.Event) int32 {
	switch {
	case e.Series != nil && e.Series.Count > 0:
		return e.Series.Count
	case e.DeprecatedCount > 0:
		return e.DeprecatedCount
	}
	return 1
}
