package restart

import (
	"fmt"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

// Given a Rollout of 10 pods with steps 1 / 50% / 100%
// When sluice is killed with SIGKILL and started again at each kind of
// transition (while a batch scales, while paused, right after an approval,
// while finalising, right after a rollback starts)
// Then every release completes with the planned pods per step, no step is
// skipped or paused twice, and no approval is lost.
func TestRestart_killedAtEveryTransition_releasesComplete(t *testing.T) {
	t.Cleanup(func() { deleteWebhooks(t, "sluice-restart") }) // runs after the last kill
	s := startSluice(t, "sluice-restart")
	r := newRelease(t, 10, "1", "50%", "100%")
	steps := watchSteps(t, r.ns)
	restart := func(at string) {
		t.Helper()
		t.Logf("killing sluice %s", at)
		s.kill(t)
		s = startSluice(t, "sluice-restart")
	}

	// A batch scaling.
	r.setImage("web:v1")
	r.wait("step 1 upgrading", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && (ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateUpgrade ||
			ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused)
	})
	restart("while step 1 upgrades")
	r.waitPaused(1)
	if got := r.pods(); got["web:v1"] != 1 || got["web:v0"] != 9 {
		t.Fatalf("step 1: pods by image %v, want 1 new and 9 old", got)
	}

	// Paused.
	restart("while step 1 is paused")
	r.waitPaused(1)
	if got := r.pods(); got["web:v1"] != 1 || got["web:v0"] != 9 {
		t.Fatalf("step 1 after a restart: pods by image %v, want 1 new and 9 old", got)
	}

	// Right after an approval, before sluice may have seen it.
	r.approve()
	restart("right after approving step 1")
	r.waitPaused(2)
	if got := r.pods(); got["web:v1"] != 5 || got["web:v0"] != 5 {
		t.Fatalf("step 2: pods by image %v, want 5 new and 5 old", got)
	}

	// Finalising.
	r.approve()
	r.wait("finalising", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	restart("while finalising")
	ro := r.waitCompleted("web:v1")
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || len(records) != 2 || records[0].Step != 1 || records[1].Step != 2 {
		t.Fatalf("approvals recorded: %+v, %v; want steps 1 and 2 once each", records, err)
	}

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

	if got, want := steps.paused(), []string{"1", "2", "1"}; !slices.Equal(got, want) {
		t.Fatalf("steps paused %v, want %v (no step skipped or paused twice)", got, want)
	}
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
		la, lb := a.leader(), b.leader()
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
	leader.kill(t)
	killed := time.Now()
	r.approve()
	eventually(t, "the standby leads", func() (bool, string) { return standby.leader(), "" })
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
	for _, n := range names {
		_ = suite.c.Delete(ctxFor(t), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: n}})
		_ = suite.c.Delete(ctxFor(t), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
}
