// Package spacing spaces out a controller's status writes of progress
// alone (pod counts): a batch of ten pods becoming ready one by one would
// otherwise cost ten status writes of each Rollout and BatchRelease, while
// every change of step, state or condition is still written at once.
package spacing

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Interval is how often an object's status is written when only its
// progress changed.
const Interval = time.Second

// Writes remembers when each object's status was last written. The zero
// value is ready to use; it is safe for concurrent use. After a restart it
// knows nothing, and the first write goes out at once.
type Writes struct {
	mu   sync.Mutex
	last map[types.NamespacedName]time.Time
}

// Wait is how long a write of progress alone must wait for the last write
// of the object to be Interval old (0: write now).
func (p *Writes) Wait(key types.NamespacedName, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.last[key]; ok && now.Sub(at) < Interval {
		return Interval - now.Sub(at)
	}
	return 0
}

// Wrote records a status write of the object at now.
func (p *Writes) Wrote(key types.NamespacedName, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[types.NamespacedName]time.Time{}
	}
	p.last[key] = now
}

// Forget drops what is remembered of an object that is gone.
func (p *Writes) Forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}
