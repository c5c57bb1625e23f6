package rollout

import (
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// progressInterval is how often a Rollout's status is written when only
// its pod counts changed. A batch of ten pods becoming ready one by one
// would otherwise cost ten status writes; every change of step, state or
// condition is still written at once.
const progressInterval = time.Second

// progressOnly reports whether after differs from before only in the pod
// counts of the release and the message that spells them out.
func progressOnly(before, after *rolloutsv1beta1.RolloutStatus) bool {
	if apiequality.Semantic.DeepEqual(before, after) {
		return false
	}
	a := after.DeepCopy()
	a.Message = before.Message
	switch {
	case a.CanaryStatus != nil && before.CanaryStatus != nil:
		a.CanaryStatus.CanaryReplicas = before.CanaryStatus.CanaryReplicas
		a.CanaryStatus.CanaryReadyReplicas = before.CanaryStatus.CanaryReadyReplicas
	case a.BlueGreenStatus != nil && before.BlueGreenStatus != nil:
		a.BlueGreenStatus.UpdatedReplicas = before.BlueGreenStatus.UpdatedReplicas
		a.BlueGreenStatus.UpdatedReadyReplicas = before.BlueGreenStatus.UpdatedReadyReplicas
	}
	return apiequality.Semantic.DeepEqual(before, a)
}

// progressWrites remembers when each Rollout's status was last written,
// to space out writes of pod counts alone. The zero value is ready to use;
// it is safe for concurrent use. After a restart it knows nothing, and the
// first write goes out at once.
type progressWrites struct {
	mu   sync.Mutex
	last map[types.NamespacedName]time.Time
}

// wait is how long a write of progress alone must wait for the last write
// of the Rollout to be progressInterval old (0: write now).
func (p *progressWrites) wait(key types.NamespacedName, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.last[key]; ok && now.Sub(at) < progressInterval {
		return progressInterval - now.Sub(at)
	}
	return 0
}

// wrote records a status write of the Rollout at now.
func (p *progressWrites) wrote(key types.NamespacedName, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[types.NamespacedName]time.Time{}
	}
	p.last[key] = now
}

// forget drops what is remembered of a Rollout that is gone.
func (p *progressWrites) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}
