package receiver

import (
	"context"
	"errors"
	"sync"
)

// triggered records the events handed to the Trigger.
type triggered struct {
	mu     sync.Mutex
	events []Event
}

func (t *triggered) Trigger(_ context.Context, e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
}

func (t *triggered) all() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Event(nil), t.events...)
}

// secretMap serves secrets per repository.
type secretMap map[string][][]byte

func (s secretMap) WebhookSecrets(context.Context, bool) ([]Secret, error) {
	var out []Secret
	for repo, values := range s {
		for _, v := range values {
			out = append(out, Secret{Value: v, Repositories: []string{repo}})
		}
	}
	return out, nil
}

// brokenSecrets is a secret store that is down.
type brokenSecrets struct{}

func (brokenSecrets) WebhookSecrets(context.Context, bool) ([]Secret, error) {
	return nil, errors.New("the secret store is down")
}

// rotatingSecrets serves stale secrets until asked to refresh, then fresh ones, and counts
// the lookups of each kind.
type rotatingSecrets struct {
	mu              sync.Mutex
	stale, fresh    secretMap
	reads, refreshs int
	refreshed       bool
}

func (r *rotatingSecrets) WebhookSecrets(ctx context.Context, refresh bool) ([]Secret, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	if refresh {
		r.refreshs++
		r.refreshed = true
	}
	if r.refreshed {
		return r.fresh.WebhookSecrets(ctx, refresh)
	}
	return r.stale.WebhookSecrets(ctx, refresh)
}

// failingTrigger refuses the first n events, then takes them.
type failingTrigger struct {
	triggered
	fail int
}

func (f *failingTrigger) TryTrigger(ctx context.Context, e Event) error {
	f.mu.Lock()
	if f.fail > 0 {
		f.fail--
		f.mu.Unlock()
		return errors.New("the API server is down")
	}
	f.mu.Unlock()
	f.Trigger(ctx, e)
	return nil
}

// counted records the deliveries counted.
type counted struct {
	mu       sync.Mutex
	outcomes []string
}

func (c *counted) Delivery(accepted bool, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	result := "rejected"
	if accepted {
		result = "accepted"
	}
	c.outcomes = append(c.outcomes, result+"/"+reason)
}

func (c *counted) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.outcomes...)
}
