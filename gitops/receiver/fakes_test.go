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

// secretMap serves secrets per repository; the repository "broken/store" fails.
type secretMap map[string][][]byte

func (s secretMap) SecretsFor(_ context.Context, repository string) ([][]byte, error) {
	if repository == "broken/store" {
		return nil, errors.New("the secret store is down")
	}
	return s[repository], nil
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
