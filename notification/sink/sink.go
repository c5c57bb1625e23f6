// Package sink is the seam between the notifier and where notifications go:
// one small interface, one package per kind (sink/webhook, sink/slack), built
// from the table in notification/sinks, the only place that names the
// kinds.
package sink

import (
	"context"
	"fmt"
	"net/http"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

// Sink delivers notifications.
type Sink interface {
	// Send delivers n once; an error means it was not accepted and may be
	// retried (with the same key, which receivers de-duplicate on).
	Send(ctx context.Context, n notificationv1alpha1.Notification) error
}

// StatusError is a receiver's answer other than 2xx.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Body is the start of the answer's body.
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("the receiver answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}
