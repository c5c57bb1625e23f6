//go:build chaos

package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Given 20 Rollouts of mixed kinds (Deployments, Deployments routed by an
// HTTPRoute, StatefulSets), each of 4 pods with steps 1 / 50% / 100%
// When all are released at once, each pause approved once, while the
// manager is SIGKILLed at random moments (200ms to 3s apart) and started
// again each time, release after release (v1, v2, ...) until it was
// killed CHAOS_KILLS times (default 50)
// Then every release completes, each pause had exactly its planned pods,
// and each Rollout recorded the approvals of steps 1 and 2 of each
// revision once each.
func TestKillStorm_everyReleaseCompletesExactlyOnce(t *testing.T) {
	kills := 50
	if v := os.Getenv("CHAOS_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_KILLS=%q: want a positive number", v)
		}
		kills = n
	}
	const name = "sluice-storm"
	t.Cleanup(func() { deleteWebhooks(name) })
	m := startManager(t, name, false)
	rs := newReleases(t, 20, kindDeployment, kindTraffic, kindStatefulSet)

	var killed atomic.Int64
	for round := 1; killed.Load() < int64(kills); round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		image := fmt.Sprintf("web:v%d", round)
		drive(t, rs, image, 20*time.Minute, func() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for killed.Load() < int64(kills) {
					select {
					case <-stop:
						return
					case <-time.After(time.Duration(200+rand.IntN(2800)) * time.Millisecond):
					}
					m.Kill(t)
					m = startManager(t, name, false)
					killed.Add(1)
				}
			}()
		})
		close(stop)
		wg.Wait()
		t.Logf("release %s of %d Rollouts complete; the manager was killed %d times so far", image, len(rs), killed.Load())
		for _, r := range rs {
			r.judge(t)
		}
		if t.Failed() {
			return
		}
	}
}
