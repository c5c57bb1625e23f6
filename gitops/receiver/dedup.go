package receiver

import (
	"container/list"
	"sync"
	"time"
)

// deliveries is a bounded set of delivery ids, each forgotten after a time to live or when
// the set is full and it is the oldest. It is safe for concurrent use.
type deliveries struct {
	capacity int
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	order *list.List               // of *seen, oldest first
	byID  map[string]*list.Element // id -> element of order
}

// seen is one remembered delivery.
type seen struct {
	id string
	at time.Time
}

func newDeliveries(capacity int, ttl time.Duration, now func() time.Time) *deliveries {
	return &deliveries{capacity: capacity, ttl: ttl, now: now, order: list.New(), byID: map[string]*list.Element{}}
}

// add remembers id and tells whether it is new: false means it was seen within the time to
// live and is still remembered.
func (d *deliveries) add(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for e := d.order.Front(); e != nil && now.Sub(e.Value.(*seen).at) >= d.ttl; e = d.order.Front() {
		d.drop(e)
	}
	if _, ok := d.byID[id]; ok {
		return false
	}
	for d.order.Len() >= d.capacity {
		d.drop(d.order.Front())
	}
	d.byID[id] = d.order.PushBack(&seen{id: id, at: now})
	return true
}

// forget drops id, so that it counts as new again (its delivery was not handed on).
func (d *deliveries) forget(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.byID[id]; ok {
		d.drop(e)
	}
}

// drop forgets one remembered id.
func (d *deliveries) drop(e *list.Element) {
	d.order.Remove(e)
	delete(d.byID, e.Value.(*seen).id)
}

// len is how many ids are remembered.
func (d *deliveries) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.order.Len()
}
