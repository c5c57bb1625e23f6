package canary

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/workload"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func rollout(steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 1},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
	}
}

func step(replicas string, pause *int32) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	return rolloutsv1beta1.CanaryStep{Replicas: &r, Pause: rolloutsv1beta1.RolloutPause{Duration: pause}}
}

func ptr[T any](v T) *T { return &v }

func releasing(updated, ready int32) *workload.Status {
	return &workload.Status{Replicas: 10, UpdatedReplicas: updated, UpdatedReadyReplicas: ready,
		StableRevision: "v1", UpdateRevision: "v2", PodTemplateHash: "v2", InProgressRollout: "web"}
}

func readyBatch(p int32) *BatchReleaseView {
	return &BatchReleaseView{Partition: ptr(p), RolloutID: "v2", Generation: 2, ObservedGeneration: 2,
		Phase: rolloutsv1beta1.RolloutPhaseProgressing, CurrentBatch: p, BatchState: rolloutsv1beta1.ReadyBatchState, StableRevision: "v1"}
}

// apply runs Next and stores the status, as the controller would.
func apply(ro *rolloutsv1beta1.Rollout, obs Observation) Actions {
	st, act := Next(ro, obs)
	ro.Status = st
	return act
}

func TestNext_multiBatchWithApproval(t *testing.T) {
	ro := rollout(step("1", nil), step("50%", nil), step("100%", nil))

	// Given a workload marked by the webhook, the release starts and asks
	// for batch 0.
	act := apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.CurrentStepIndex != 1 ||
		ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
		t.Fatalf("after start: phase %s step %d %s", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	if act.BatchRelease != EnsureBatchRelease || *act.Partition != 0 {
		t.Fatalf("after start: actions %+v", act)
	}
	if ro.Status.CanaryStatus.StableRevision != "v1" || ro.Status.CanaryStatus.CanaryRevision != "v2" {
		t.Fatalf("revisions %+v", ro.Status.CanaryStatus)
	}

	// When batch 0 is ready, the step pauses for approval.
	act = apply(ro, Observation{Now: t0.Add(time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || act.BatchRelease != KeepBatchRelease {
		t.Fatalf("after batch 0: %s, actions %+v", ro.Status.CurrentStepState, act)
	}
	if len(act.Events) != 1 || act.Events[0].Reason != "StepPaused" {
		t.Fatalf("events %+v", act.Events)
	}

	// An approval for another revision does nothing.
	apply(ro, Observation{Now: t0.Add(2 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0),
		Approval: &approval.Approval{Revision: "v9", Step: 1}})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("stale approval advanced to %s", ro.Status.CurrentStepState)
	}

	// An approval for this revision moves to step 2 and is recorded.
	act = apply(ro, Observation{Now: t0.Add(3 * time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0),
		Approval: &approval.Approval{Revision: "v2", Step: 1, By: "alice"}})
	if ro.Status.CurrentStepIndex != 2 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
		t.Fatalf("after approval: step %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	if act.Approved == nil || act.Approved.By != "alice" || act.Approved.Step != 1 || act.Approved.Via != "annotation" {
		t.Fatalf("approval record %+v", act.Approved)
	}
	if act.BatchRelease != EnsureBatchRelease || *act.Partition != 1 {
		t.Fatalf("step 2 actions %+v", act)
	}

	// kubectl-kruise rollout approve: a status patch to StepReady.
	apply(ro, Observation{Now: t0.Add(4 * time.Minute), Workload: releasing(5, 5), BatchRelease: readyBatch(1)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("step 2: %s", ro.Status.CurrentStepState)
	}
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	act = apply(ro, Observation{Now: t0.Add(5 * time.Minute), Workload: releasing(5, 5), BatchRelease: readyBatch(1), StatusApprover: "kubectl-kruise"})
	if ro.Status.CurrentStepIndex != 3 || act.Approved == nil || act.Approved.Via != "status" || act.Approved.By != "kubectl-kruise" {
		t.Fatalf("status approval: step %d, record %+v", ro.Status.CurrentStepIndex, act.Approved)
	}

	// The last step releases everything and does not pause; the release
	// finishes through the BatchRelease with WaitResume.
	act = apply(ro, Observation{Now: t0.Add(6 * time.Minute), Workload: releasing(10, 10), BatchRelease: readyBatch(2)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted || act.BatchRelease != EnsureBatchRelease ||
		act.Partition != nil || act.Policy != rolloutsv1beta1.WaitResumeFinalizingPolicy {
		t.Fatalf("finalising: %s, actions %+v", ro.Status.CurrentStepState, act)
	}
	done := &BatchReleaseView{Policy: rolloutsv1beta1.WaitResumeFinalizingPolicy, Generation: 3, ObservedGeneration: 3, Phase: rolloutsv1beta1.BatchReleasePhaseCompleted}
	act = apply(ro, Observation{Now: t0.Add(7 * time.Minute), Workload: releasing(10, 10), BatchRelease: done})
	if act.BatchRelease != DeleteBatchRelease {
		t.Fatalf("completed BatchRelease not deleted: %+v", act)
	}
	upToDate := &workload.Status{Replicas: 10, UpdatedReplicas: 10, UpdatedReadyReplicas: 10, UpdateRevision: "v2", UpToDate: true}
	apply(ro, Observation{Now: t0.Add(8 * time.Minute), Workload: upToDate})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || ro.Status.Message != "Rollout completed: revision v2 released" {
		t.Fatalf("end: %s %q", ro.Status.Phase, ro.Status.Message)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "True" {
		t.Fatalf("Succeeded condition %+v", c)
	}
}

func TestNext_timedPauseAdvancesByItself(t *testing.T) {
	ro := rollout(step("1", ptr[int32](30)), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	act := apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || act.RequeueAfter != 30*time.Second {
		t.Fatalf("paused: %s, requeue %v", ro.Status.CurrentStepState, act.RequeueAfter)
	}
	act = apply(ro, Observation{Now: t0.Add(20 * time.Second), Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if act.RequeueAfter != 10*time.Second {
		t.Fatalf("requeue %v, want 10s", act.RequeueAfter)
	}
	apply(ro, Observation{Now: t0.Add(30 * time.Second), Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("after pause: step %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
}

func TestNext_rollbackMidStep_cancelsAtOnce(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	back := &workload.Status{Replicas: 10, UpdatedReplicas: 9, UpdatedReadyReplicas: 9, StableRevision: "v1",
		UpdateRevision: "v1", InRollback: true, InProgressRollout: "web"}
	act := apply(ro, Observation{Now: t0, Workload: back, BatchRelease: readyBatch(0)})
	if act.BatchRelease != EnsureBatchRelease || act.Partition != nil || act.Policy != rolloutsv1beta1.ImmediateFinalizingPolicy {
		t.Fatalf("rollback actions %+v", act)
	}
	apply(ro, Observation{Now: t0, Workload: &workload.Status{Replicas: 10, UpdatedReplicas: 10, UpdateRevision: "v1", UpToDate: true}})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy {
		t.Fatalf("phase %s", ro.Status.Phase)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "False" {
		t.Fatalf("Succeeded condition %+v", c)
	}
}

// A workload read while its stable-revision mark is not there (the
// adapter then cannot say InRollback) whose template is back on the
// release's stable revision is still a rollback: never a release of the
// stable revision "restarted" at step 1.
func TestNext_templateBackOnStableWithoutTheWorkloadsMark_rollsBack(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	back := &workload.Status{Replicas: 10, UpdatedReplicas: 9, UpdatedReadyReplicas: 9, UpdateRevision: "v1", PodTemplateHash: "v1", InProgressRollout: "web"}
	act := apply(ro, Observation{Now: t0, Workload: back, BatchRelease: readyBatch(0)})
	if act.BatchRelease != EnsureBatchRelease || act.Partition != nil || act.Policy != rolloutsv1beta1.ImmediateFinalizingPolicy {
		t.Fatalf("actions %+v, want the rollback's (status %+v)", act, ro.Status.CanaryStatus)
	}
	for _, e := range act.Events {
		if e.Reason == "Restarted" {
			t.Fatalf("event %+v: the stable revision was released as a new one", e)
		}
	}
}

func TestNext_upToDateWorkload_isHealthyWithoutActions(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	w := &workload.Status{Replicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3, UpdateRevision: "v1", UpToDate: true}
	act := apply(ro, Observation{Now: t0, Workload: w})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || act.BatchRelease != KeepBatchRelease || act.HandBack {
		t.Fatalf("phase %s actions %+v", ro.Status.Phase, act)
	}
	if cs := ro.Status.CanaryStatus; cs == nil || cs.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted || cs.ObservedRolloutID != "v1" {
		t.Fatalf("canary status %+v", cs)
	}
}

func TestNext_disabledMidRelease_handsBack(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	ro.Spec.Disabled = true
	act := apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseDisabling || act.BatchRelease != EnsureBatchRelease || act.Partition != nil {
		t.Fatalf("disabling: %s %+v", ro.Status.Phase, act)
	}
	apply(ro, Observation{Now: t0, Workload: &workload.Status{Replicas: 10, UpdateRevision: "v2"}})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseDisabled {
		t.Fatalf("phase %s", ro.Status.Phase)
	}
}

func TestNext_deletedWithoutBatchRelease_handsBackThenReleasesFinalizer(t *testing.T) {
	ro := rollout(step("1", nil))
	act := apply(ro, Observation{Now: t0, Deleting: true, Workload: releasing(0, 0)})
	if !act.HandBack || act.RemoveFinalizer {
		t.Fatalf("actions %+v", act)
	}
	act = apply(ro, Observation{Now: t0, Deleting: true, Workload: &workload.Status{Replicas: 10}})
	if !act.RemoveFinalizer {
		t.Fatalf("actions %+v", act)
	}
}

func TestNext_blocked_keepsTheHeldUpdateAndNeverStarts(t *testing.T) {
	ro := rollout(step("1", nil))
	act := apply(ro, Observation{Now: t0, Workload: releasing(0, 0), Blocking: []string{"spec.strategy.type is Recreate"}})
	if ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing || act.HandBack || act.BatchRelease != 0 {
		t.Fatalf("phase %s actions %+v", ro.Status.Phase, act)
	}
	if !strings.Contains(ro.Status.Message, "Recreate") {
		t.Fatalf("message %q does not say what holds the release", ro.Status.Message)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSupported); c == nil || c.Status != "False" {
		t.Fatalf("Supported condition %+v", c)
	}
}

func TestNext_blockedMidRelease_holdsAtTheStep(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("before the block: %+v", ro.Status.CanaryStatus)
	}
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	act := apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0),
		Blocking: []string{"spec.updateStrategy.type is InPlaceOnly"}})
	if ro.Status.CurrentStepIndex != 1 || act.BatchRelease != 0 || act.HandBack || act.Approved != nil {
		t.Fatalf("moved on while blocked: step %d, actions %+v", ro.Status.CurrentStepIndex, act)
	}
	if !strings.Contains(ro.Status.Message, "Held at step 1/2") {
		t.Fatalf("message %q", ro.Status.Message)
	}
}

func TestNext_statusApprovalBeforeBatchReady_waitsForThePods(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	upgrading := &BatchReleaseView{Partition: ptr[int32](0), Generation: 1, ObservedGeneration: 1,
		Phase: rolloutsv1beta1.RolloutPhaseProgressing, BatchState: rolloutsv1beta1.UpgradingBatchState}
	act := apply(ro, Observation{Now: t0, Workload: releasing(0, 0), BatchRelease: upgrading})
	if ro.Status.CurrentStepIndex != 1 || act.Approved != nil {
		t.Fatalf("moved on before the batch was ready: step %d, %+v", ro.Status.CurrentStepIndex, act.Approved)
	}
	act = apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepIndex != 2 || act.Approved == nil || act.Approved.Via != "status" {
		t.Fatalf("after the batch: step %d, %+v", ro.Status.CurrentStepIndex, act.Approved)
	}
}

func condition(ro *rolloutsv1beta1.Rollout, t rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == t {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

func TestNext_newRevisionMidRelease_restartsWithoutHandingBack(t *testing.T) {
	ro := rollout(step("1", nil), step("50%", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(1)})
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("setup: step %d", ro.Status.CurrentStepIndex)
	}
	v3 := releasing(0, 0)
	v3.UpdateRevision, v3.PodTemplateHash = "v3", "v3"
	act := apply(ro, Observation{Now: t0, Workload: v3, BatchRelease: readyBatch(1)})
	if act.BatchRelease == DeleteBatchRelease || act.HandBack {
		t.Fatalf("restart handed the workload back: %+v", act)
	}
	cs := ro.Status.CanaryStatus
	if cs.CurrentStepIndex != 1 || cs.CanaryRevision != "v3" || cs.StableRevision != "v1" || cs.ObservedRolloutID != "v3" {
		t.Fatalf("after restart: %+v", cs)
	}
	if act.BatchRelease != EnsureBatchRelease || *act.Partition != 0 {
		t.Fatalf("after restart: actions %+v", act)
	}
}

func TestNext_stepJump(t *testing.T) {
	tests := []struct {
		name      string
		next      int32
		wantStep  int32
		wantState rolloutsv1beta1.CanaryStepState
		wantEvent string
	}{
		{"forward past the next step", 4, 4, rolloutsv1beta1.CanaryStepStateUpgrade, "StepJumped"},
		{"back to the first step", 1, 1, rolloutsv1beta1.CanaryStepStateUpgrade, "StepJumped"},
		{"out of range is corrected", 7, 2, rolloutsv1beta1.CanaryStepStatePaused, "InvalidStepJump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := rollout(step("1", nil), step("50%", nil), step("70%", nil), step("100%", nil))
			apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
			apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
			ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
			apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
			apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(1)})
			if ro.Status.CurrentStepIndex != 2 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
				t.Fatalf("setup: step %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
			}
			ro.Status.CanaryStatus.NextStepIndex = tt.next
			act := apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(1)})
			if ro.Status.CurrentStepIndex != tt.wantStep || ro.Status.CurrentStepState != tt.wantState {
				t.Fatalf("step %d %s, want %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, tt.wantStep, tt.wantState)
			}
			if len(act.Events) == 0 || act.Events[0].Reason != tt.wantEvent {
				t.Fatalf("events %+v, want %s", act.Events, tt.wantEvent)
			}
			if ro.Status.CanaryStatus.NextStepIndex != nextIndex(ro.Status.CurrentStepIndex, 4) {
				t.Fatalf("nextStepIndex %d after the jump", ro.Status.CanaryStatus.NextStepIndex)
			}
		})
	}
}

// A new revision while step 1 is paused restarts at step 1, whose
// partition the BatchRelease already has: the plan is still updated, so
// that its rollout ID names the new release the BatchRelease waits for.
func TestNext_newRevisionAtTheSamePartition_updatesThePlansRolloutID(t *testing.T) {
	ro := rollout(step("1", nil), step("50%", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0.Add(time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("step 1: %s", ro.Status.CurrentStepState)
	}
	v3 := releasing(0, 0)
	v3.UpdateRevision, v3.PodTemplateHash = "v3", "v3"
	var act Actions
	for i := range 3 { // restart, then step 1 of v3
		act = apply(ro, Observation{Now: t0.Add(time.Duration(2+i) * time.Minute), Workload: v3, BatchRelease: readyBatch(0)})
		if act.BatchRelease == EnsureBatchRelease {
			break
		}
	}
	if ro.Status.CanaryStatus.ObservedRolloutID != "v3" || ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("after v3: rollout ID %q step %d", ro.Status.CanaryStatus.ObservedRolloutID, ro.Status.CurrentStepIndex)
	}
	if act.BatchRelease != EnsureBatchRelease || act.Partition == nil || *act.Partition != 0 {
		t.Fatalf("after v3: actions %+v, want the plan ensured at partition 0 for the new rollout ID", act)
	}
}

// A Rollout that must wait for something it names (a TrafficRouting not
// created yet) keeps a new revision held: no release starts, nothing is
// handed back, and the message says why; once nothing is missing, the
// release starts.
func TestNext_waiting_keepsTheNewRevisionHeld(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	act := apply(ro, Observation{Now: t0, Workload: releasing(0, 0), Waiting: "trafficRoutingRef: TrafficRouting shared not found"})
	if ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing || act.HandBack || act.BatchRelease != KeepBatchRelease {
		t.Fatalf("while waiting: phase %s, actions %+v; want no release and nothing handed back", ro.Status.Phase, act)
	}
	if !strings.Contains(ro.Status.Message, "TrafficRouting shared not found") {
		t.Errorf("message %q does not say what is missing", ro.Status.Message)
	}
	apply(ro, Observation{Now: t0.Add(time.Minute), Workload: releasing(0, 0)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		t.Fatalf("once nothing is missing: phase %s, want Progressing", ro.Status.Phase)
	}
}
