//go:build chaos

package chaos

import (
	"context"
	"sync"
	"testing"
	"time"
)

// withFaults drives rs to completion on image while fault runs in the
// background; fault must return soon after stop is closed.
func withFaults(t *testing.T, rs []*release, image string, fault func(stop <-chan struct{})) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	drive(t, rs, image, 15*time.Minute, func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fault(stop)
		}()
	})
}

// sleepOr waits d, or less when stop is closed; it reports whether to go
// on.
func sleepOr(stop <-chan struct{}, d time.Duration) bool {
	select {
	case <-stop:
		return false
	case <-time.After(d):
		return true
	}
}

// Given two managers with leader election (lease 4s) and 6 Rollouts of
// mixed kinds
// When all are released at once and the leader is SIGKILLed three times
// mid-release (started again each time, as the new standby)
// Then the standby leads within twice the lease each time, every release
// completes with exactly the planned pods per pause, and each Rollout
// recorded each approval once.
func TestLeaderFailover_standbyTakesOverAndNothingIsDoneTwice(t *testing.T) {
	const lease = 4 * time.Second
	flags := []string{"--leader-elect", "--leader-election-namespace=default", "--leader-election-lease-duration=" + lease.String()}
	t.Cleanup(func() { deleteWebhooks("sluice-a", "sluice-b") })
	managers := map[string]*manager{"sluice-a": startManager(t, "sluice-a", true, flags...)}
	var leader *manager
	waitLeader := func(what string, among map[string]*manager) *manager {
		t.Helper()
		var got *manager
		if err := waitFor(context.Background(), func() bool {
			for _, m := range among {
				if m.Leader() {
					got = m
					return true
				}
			}
			return false
		}); err != nil {
			t.Errorf("%s: no leader: %v", what, err)
		}
		return got
	}
	leader = waitLeader("first start", managers)
	managers["sluice-b"] = startManager(t, "sluice-b", true, flags...)
	rs := newReleases(t, 6, kindDeployment, kindStatefulSet, kindTraffic)

	withFaults(t, rs, "web:v1", func(stop <-chan struct{}) {
		for i := range 3 {
			if !sleepOr(stop, time.Duration(2+i)*time.Second) {
				return
			}
			if leader == nil {
				return
			}
			leader.Kill(t)
			killed := time.Now()
			others := map[string]*manager{}
			for n, m := range managers {
				if m != leader {
					others[n] = m
				}
			}
			next := waitLeader("after killing "+leader.Name, others)
			if took := time.Since(killed); took > 2*lease {
				t.Errorf("the standby took over after %s, more than twice the lease (%s)", took, lease)
			} else {
				t.Logf("%s leads %s after %s was killed", next.Name, time.Since(killed).Round(100*time.Millisecond), leader.Name)
			}
			managers[leader.Name] = startManager(t, leader.Name, true, flags...)
			leader = next
		}
	})
	for _, r := range rs {
		r.judge(t)
	}
}

// Given one manager and 6 Rollouts of mixed kinds
// When all are released at once while kube-apiserver is restarted twice
// and etcd is frozen (SIGSTOP) for 5s between
// Then every release completes (none stuck) with exactly the planned pods
// per pause, and each Rollout recorded each approval once.
func TestControlPlaneFaults_apiServerRestartAndEtcdPause_releasesResume(t *testing.T) {
	const name = "sluice-cpfaults"
	t.Cleanup(func() { deleteWebhooks(name) })
	startManager(t, name, false)
	rs := newReleases(t, 6, kindDeployment, kindStatefulSet, kindTraffic)
	withFaults(t, rs, "web:v1", func(stop <-chan struct{}) {
		faults := []func() error{
			func() error { return suite.cluster.RestartAPIServer(context.Background()) },
			func() error { return suite.cluster.PauseEtcd(5 * time.Second) },
			func() error { return suite.cluster.RestartAPIServer(context.Background()) },
		}
		for _, f := range faults {
			if !sleepOr(stop, 3*time.Second) {
				return
			}
			if err := f(); err != nil {
				t.Errorf("fault: %v", err)
				return
			}
		}
	})
	for _, r := range rs {
		r.judge(t)
	}
}
