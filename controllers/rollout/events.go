package rollout

import (
	"sync"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/canary"
)

// maxOnce bounds the once-only events remembered; past it the memory starts
// again (a refusal still lasting is then reported once more).
const maxOnce = 4096

// onceEvents remembers the once-only events recorded: refusals the step
// machine reports on every reconcile while their cause lasts (an abort
// request naming another revision, an approval of an aborted release).
type onceEvents struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether e is new for ro, and remembers it.
func (o *onceEvents) first(ro *rolloutsv1beta1.Rollout, e canary.Event) bool {
	key := string(ro.UID) + "\x00" + e.Reason + "\x00" + e.Message
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil || len(o.seen) >= maxOnce {
		o.seen = map[string]bool{}
	}
	if o.seen[key] {
		return false
	}
	o.seen[key] = true
	return true
}

// eventOnce records e on ro unless it was recorded already.
func (r *Reconciler) eventOnce(ro *rolloutsv1beta1.Rollout, e canary.Event) {
	if r.once.first(ro, e) {
		r.Recorder.Eventf(ro, nil, e.Type, e.Reason, "Release", "%s", e.Message)
	}
}
