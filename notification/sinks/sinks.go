// Package sinks is the factory of notification sinks: the one table that
// names each kind (webhook, slack) and how it is built from a Notifier's
// spec and Secrets. Adding a kind is its package plus one row here.
package sinks

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	"github.com/sluice-dev/sluice/notification/sink"
	"github.com/sluice-dev/sluice/notification/sink/slack"
	"github.com/sluice-dev/sluice/notification/sink/webhook"
)

// Timeout bounds one delivery attempt: a slow receiver delays only its
// own notifications.
const Timeout = 5 * time.Second

// Deps is what the sinks are built with.
type Deps struct {
	// Secrets reads a Secret of the Notifier's namespace.
	Secrets func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Client sends the requests (nil: one with Timeout).
	Client *http.Client
}

// Kind is one row of the table.
type Kind struct {
	// Name is the kind's field in spec.sinks[].
	Name string
	// Set reports whether s uses the kind.
	Set func(s *notificationv1alpha1.Sink) bool
	// New builds the sink.
	New func(ctx context.Context, s *notificationv1alpha1.Sink, namespace string, d Deps) (sink.Sink, error)
}

// Kinds returns the table.
func Kinds() []Kind {
	return []Kind{
		{Name: "webhook", Set: func(s *notificationv1alpha1.Sink) bool { return s.Webhook != nil }, New: newWebhook},
		{Name: "slack", Set: func(s *notificationv1alpha1.Sink) bool { return s.Slack != nil }, New: newSlack},
	}
}

// For builds the sink s describes.
func For(ctx context.Context, s *notificationv1alpha1.Sink, namespace string, d Deps) (sink.Sink, error) {
	if d.Client == nil {
		d.Client = &http.Client{Timeout: Timeout}
	}
	var found []Kind
	for _, k := range Kinds() {
		if k.Set(s) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		names := make([]string, 0, len(Kinds()))
		for _, k := range Kinds() {
			names = append(names, k.Name)
		}
		return nil, fmt.Errorf("sink %s: set exactly one of %s", s.Name, strings.Join(names, ", "))
	}
	return found[0].New(ctx, s, namespace, d)
}

func newWebhook(ctx context.Context, s *notificationv1alpha1.Sink, namespace string, d Deps) (sink.Sink, error) {
	w := &webhook.Sink{URL: s.Webhook.URL, Client: d.Client}
	if ref := s.Webhook.SecretRef; ref != nil {
		sec, err := d.Secrets(ctx, namespace, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("sink %s: webhook.secretRef %s: %w", s.Name, ref.Name, err)
		}
		if w.Secret = sec.Data["token"]; len(w.Secret) == 0 {
			return nil, fmt.Errorf("sink %s: webhook.secretRef %s has no key token", s.Name, ref.Name)
		}
	}
	return w, nil
}

func newSlack(ctx context.Context, s *notificationv1alpha1.Sink, namespace string, d Deps) (sink.Sink, error) {
	ref := s.Slack.SecretRef
	sec, err := d.Secrets(ctx, namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("sink %s: slack.secretRef %s: %w", s.Name, ref.Name, err)
	}
	addr := strings.TrimSpace(string(sec.Data["address"]))
	if !strings.HasPrefix(addr, "https://") && !strings.HasPrefix(addr, "http://") {
		return nil, fmt.Errorf("sink %s: slack.secretRef %s: key address must hold the incoming webhook's http(s) URL", s.Name, ref.Name)
	}
	return &slack.Sink{URL: addr, Client: d.Client}, nil
}
