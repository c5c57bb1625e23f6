package restart

import (
	"fmt"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// Given a Rollout of 10 pods with steps 1 / 50% / 100%
// When sluice is killed with SIGKILL and started again while a step is
// paused, right after an approval (before sluice may have seen it) and
// right after the template went back mid-release (a rollback)
// Then the release completes with the planned pods per step, the Rollout
// records each pause and approval once, and the rollback completes. (The
// kills at each write of a batch are in killpoints_test.go.)
func TestRestart_killedWhilePausedAfterApprovalAndInRollback_releasesComplete(t *testing.T) {
	t.Cleanup(func() { deleteWebhooks(t, "sluice-restart") }) // runs after the last kill
	s := startSluice(t, "sluice-restart")
	r := newRelease(t, 10, "1", "50%", "100%")
	restart := func(at string) {
		t.Helper()
		t.Logf("killing sluice %s", at)
		s.Kill(t)
		s = startSluice(t, "sluice-restart")
	}

	r.setImage("web:v1")
	r.waitPaused(1)
	restart("while step 1 is paused")
	r.waitPaused(1)
	r.expectPods("step 1 after a restart", map[string]int{"web:v1": 1, "web:v0": 9})

	// Right after an approval, before sluice may have seen it.
	r.approve()
	restart("right after approving step 1")
	r.waitPaused(2)
	r.expectPods("step 2", map[string]int{"web:v1": 5, "web:v0": 5})

	r.approve()
	r.waitCompleted("web:v1")
	r.judge(1, 2)

	// A rollback in progress.
	r.setImage("web:v2")
	r.waitPaused(1)
	r.setImage("web:v1")
	restart("right after the template went back")
	r.wait("rolled back", func(ro *rolloutsv1beta1.Rollout) bool {
		c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False"
	})
	r.waitComplete("web:v1")
}

// Given two sluice replicas with leader election, and a release paused at
// step 1
// When the leader is killed and the step approved
// Then the standby takes over within the lease time and the release
// completes.
func TestLeaderElection_killingTheLeaderHandsOver(t *testing.T) {
	const lease = 4 * time.Second
	t.Cleanup(func() { deleteWebhooks(t, "sluice-a", "sluice-b") })
	flags := []string{"--leader-elect", "--leader-election-namespace=default", "--leader-election-lease-duration=" + lease.String()}
	a := startSluice(t, "sluice-a", flags...)
	b := startSluice(t, "sluice-b", flags...)
	var leader, standby *sluice
	eventually(t, "one leader", func() (bool, string) {
		la, lb := a.Leader(), b.Leader()
		switch {
		case la && !lb:
			leader, standby = a, b
		case lb && !la:
			leader, standby = b, a
		}
		return leader != nil, fmt.Sprintf("a leader %v, b leader %v", la, lb)
	})
	r := newRelease(t, 4, "1", "100%")

	r.setImage("web:v1")
	r.waitPaused(1)
	leader.Kill(t)
	killed := time.Now()
	r.approve()
	eventually(t, "the standby leads", func() (bool, string) { return standby.Leader(), "" })
	if took := time.Since(killed); took > 2*lease {
		t.Fatalf("the standby took over after %s, more than twice the lease (%s)", took, lease)
	}
	r.waitCompleted("web:v1")
}

func condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

// deleteWebhooks removes webhook configurations a killed sluice left.
func deleteWebhooks(t *testing.T, names ...string) {
	managerproc.DeleteWebhooks(ctxFor(t), suite.c, names...)
}
