package webhook

import (
	"sync"
	"time"
)

// deliveries is a bounded set of delivery ids, each forgotten after a time to live or, when
// the set is full, oldest first. It is safe for concurrent use.
type deliveries struct {
	capacity int
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	queue []arrival // oldest first; each id at most once
	ids   map[string]struct{}
}

// arrival is one remembered delivery.
type arrival struct {
	id string
	at time.Time
}

func newDeliveries(capacity int, ttl time.Duration, now func() time.Time) *deliveries {
	return &deliveries{capacity: capacity, ttl: ttl, now: now, ids: map[string]struct{}{}}
}

// add remembers id and tells whether it is new: false means it was accepted within the time to
// live and is still remembered.
func (d *deliveries) add(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for len(d.queue) > 0 && now.Sub(d.queue[0].at) >= d.ttl {
		d.dropOldest()
	}
	if _, ok := d.ids[id]; ok {
		return false
	}
	for len(d.queue) >= d.capacity {
		d.dropOldest()
	}
	d.queue = append(d.queue, arrival{id: id, at: now})
	d.ids[id] = struct{}{}
	return true
}

func (d *deliveries) dropOldest() {
	delete(d.ids, d.queue[0].id)
	d.queue = d.queue[1:]
}
