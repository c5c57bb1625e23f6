package canary

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

func TestRollbackInBatch(t *testing.T) {
	blueGreen := func(ro *rolloutsv1beta1.Rollout) {
		ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
			Steps: []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
		}}
	}
	routed := func(ro *rolloutsv1beta1.Rollout) {
		ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{Service: "web"}}
	}
	canaryStyle := func(ro *rolloutsv1beta1.Rollout) {
		ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = true
	}
	tests := []struct {
		name       string
		annotation string
		edit       func(*rolloutsv1beta1.Rollout)
		want       bool
		wantWhy    string
	}{
		{name: "canary with the annotation", annotation: "true", want: true},
		{name: "canary without it", want: false},
		{name: "any other value", annotation: "yes", want: false},
		{name: "in place routing traffic rolls back in batches too", annotation: "true", edit: routed, want: true},
		{name: "blue-green rolls back at once: every old pod still runs", annotation: "true", edit: blueGreen, want: false, wantWhy: "blue-green"},
		{name: "canary Deployment without traffic runs the steps again", annotation: "true", edit: canaryStyle, want: true},
		{name: "canary Deployment routing traffic rolls back at once", annotation: "true",
			edit: func(ro *rolloutsv1beta1.Rollout) { canaryStyle(ro); routed(ro) }, want: false, wantWhy: "canary Deployment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := rollout(step("1", nil), step("100%", nil))
			if tt.annotation != "" {
				ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: tt.annotation}
			}
			if tt.edit != nil {
				tt.edit(ro)
			}
			if got := rollbackInBatch(ro); got != tt.want {
				t.Fatalf("rollbackInBatch = %v, want %v", got, tt.want)
			}
			why := rollbackAtOnceReason(ro)
			if (tt.wantWhy == "") != (why == "") || !strings.Contains(why, tt.wantWhy) {
				t.Fatalf("rollbackAtOnceReason = %q, want one mentioning %q", why, tt.wantWhy)
			}
		})
	}
}

// batchRollbackRollout is an in-place Rollout routing through an nginx
// Ingress (20% / a header match / 50% / 100% without traffic), annotated
// to roll back in batches.
func batchRollbackRollout() *rolloutsv1beta1.Rollout {
	ro := trafficRollout()
	ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = false
	ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	return ro
}

// rollingBackIn sets ro's status to a rollback in batches to v1 (the
// release of v2 it abandoned had v1 as its stable revision) at step idx
// in state.
func rollingBackIn(ro *rolloutsv1beta1.Rollout, reason string, idx int32, state rolloutsv1beta1.CanaryStepState, fin rolloutsv1beta1.FinalisingStepType) *rolloutsv1beta1.Rollout {
	inStep(ro, reason, idx, state, fin)
	ro.Status.CanaryStatus.CanaryRevision, ro.Status.CanaryStatus.PodTemplateHash = "v1", "v1"
	return ro
}

func TestWanted_rollbackInBatches_everyRequestOnTheTargetPods(t *testing.T) {
	const (
		inRolling  = rolloutsv1beta1.ProgressingReasonInRolling
		finalising = rolloutsv1beta1.ProgressingReasonFinalising
	)
	onTarget := Traffic{Stable: StableNarrow, StableRevision: "v1", Routes: RoutesRestore, Canary: CanaryRemove}
	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		want Traffic
	}{
		{"first step before upgrade: routes and canary Service removed, stable Service on v1",
			rollingBackIn(batchRollbackRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateBeforeUpgrade, ""), onTarget},
		{"first step upgrading", rollingBackIn(batchRollbackRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateUpgrade, ""), onTarget},
		{"a traffic step's routing state: no weight to anything",
			rollingBackIn(batchRollbackRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateTrafficRouting, ""), onTarget},
		{"a traffic step paused", rollingBackIn(batchRollbackRollout(), inRolling, 3, rolloutsv1beta1.CanaryStepStatePaused, ""), onTarget},
		{"the last step, releasing every pod: still narrowed to v1, never restored while v2 pods run",
			rollingBackIn(batchRollbackRollout(), inRolling, 4, rolloutsv1beta1.CanaryStepStateUpgrade, ""), onTarget},
		{"finishing: routes to stable, the stable Service stays narrowed through the hand-back",
			rollingBackIn(batchRollbackRollout(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, ""), Traffic{Routes: RoutesRestore}},
		{"finishing, workload on v1 alone: stable Service restored, canary Service removed",
			rollingBackIn(batchRollbackRollout(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.FinalisingStepRestoreStableService),
			Traffic{Stable: StableRestore, Canary: CanaryRemove}},
		{"a forward release of the same Rollout still shifts weight",
			inStep(batchRollbackRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""),
			Traffic{Stable: StableNarrow, StableRevision: "v1", Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](20)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			back := &workload.Status{Replicas: 10, UpdatedReplicas: 5, UpdatedReadyReplicas: 5, StableRevision: "v1",
				UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
			if got := Wanted(tt.ro, Observation{Workload: back, Traffic: &TrafficObservation{}}); !got.Equal(tt.want) {
				t.Fatalf("Wanted = %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Given an in-place release of v2 routing traffic, paused at step 3 (50%)
// with rollback-in-batch
// When the template goes back to v1
// Then the abandoned BatchRelease is deleted leaving the workload held,
// the routes go back to the v1 pods, and only then does step 1 of the
// rollback create a BatchRelease for batch 0; each step pauses without
// routing anything; the end hands the workload back before the stable
// Service is restored, and reports RolledBack.
func TestNext_rollbackInBatchesWithTraffic_routesBackBeforeAnyPodMoves(t *testing.T) {
	ro := inStep(batchRollbackRollout(), rolloutsv1beta1.ProgressingReasonInRolling, 3, rolloutsv1beta1.CanaryStepStatePaused, "")
	back := func(updated int32) *workload.Status {
		return &workload.Status{Replicas: 10, UpdatedReplicas: updated, UpdatedReadyReplicas: updated, StableRevision: "v1",
			UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
	}
	old := readyBatch(2)
	old.UpdateRevision = "v1" // the BatchRelease may see the revert first

	// The revert is seen: the old BatchRelease goes, the workload stays held.
	act, ensured := routedStep(ro, Observation{Now: t0, Workload: back(5), BatchRelease: old}, true)
	cs := ro.Status.CanaryStatus
	if act.BatchRelease != DeleteBatchRelease || !act.SkipHandBack || cs.CurrentStepIndex != 1 ||
		cs.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade || cs.CanaryRevision != "v1" || cs.StableRevision != "v1" {
		t.Fatalf("revert seen: actions %+v, status %+v", act, cs)
	}
	if ensured.Routes != RoutesShift || !hasEvent(act, "RollingBackInBatches") {
		t.Fatalf("revert seen: ensured %s (the step 3 traffic, stored before), events %+v", ensured, act.Events)
	}
	// The BatchRelease is being deleted: nothing is released, the routes
	// go back to the v1 pods.
	deleting := *old
	deleting.Deleting = true
	act, ensured = routedStep(ro, Observation{Now: t0.Add(time.Second), Workload: back(5), BatchRelease: &deleting}, false)
	onTarget := Traffic{Stable: StableNarrow, StableRevision: "v1", Routes: RoutesRestore, Canary: CanaryRemove}
	if !ensured.Equal(onTarget) || act.BatchRelease != KeepBatchRelease || ro.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade {
		t.Fatalf("while deleting: ensured %s, actions %+v, state %s", ensured, act, ro.Status.CanaryStatus.CurrentStepState)
	}
	// Gone, the routes converged but within the grace period: still nothing.
	act, _ = routedStep(ro, Observation{Now: t0.Add(2 * time.Second), Workload: back(5)}, true)
	if act.BatchRelease != KeepBatchRelease || ro.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade {
		t.Fatalf("within the grace period: actions %+v, state %s", act, ro.Status.CanaryStatus.CurrentStepState)
	}
	// Grace over: step 1 releases batch 0 of the rollback.
	act, _ = routedStep(ro, Observation{Now: t0.Add(5 * time.Second), Workload: back(5)}, true)
	if act.BatchRelease != EnsureBatchRelease || act.Partition == nil || *act.Partition != 0 ||
		ro.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
		t.Fatalf("routed back: actions %+v, state %s", act, ro.Status.CanaryStatus.CurrentStepState)
	}
	// Batch 0 ready: the step pauses, its 20% routes nothing anywhere.
	br := readyBatch(0)
	br.UpdateRevision = "v1"
	_, ensured = routedStep(ro, Observation{Now: t0.Add(time.Minute), Workload: back(6), BatchRelease: br}, true)
	if ro.Status.CanaryStatus.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || !ensured.Equal(onTarget) {
		t.Fatalf("step 1 of the rollback: state %s, ensured %s", ro.Status.CanaryStatus.CurrentStepState, ensured)
	}
	// The last step is done: finishing routes to stable, hands the
	// workload back, and keeps the stable Service narrowed while v2 pods
	// run.
	ro = rollingBackIn(ro, rolloutsv1beta1.ProgressingReasonFinalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, "")
	routedStep(ro, Observation{Now: t0.Add(2 * time.Minute), Workload: back(10), BatchRelease: readyBatch(3)}, true)
	act, ensured = routedStep(ro, Observation{Now: t0.Add(3 * time.Minute), Workload: back(10), BatchRelease: readyBatch(3)}, true)
	if !ensured.Equal(Traffic{Routes: RoutesRestore}) || act.BatchRelease != EnsureBatchRelease || act.Partition != nil ||
		act.Policy != rolloutsv1beta1.WaitResumeFinalizingPolicy {
		t.Fatalf("hand-back: ensured %s, actions %+v", ensured, act)
	}
	handedBack := back(10)
	handedBack.InProgressRollout = ""
	_, ensured = routedStep(ro, Observation{Now: t0.Add(4 * time.Minute), Workload: handedBack}, true)
	if ensured.Stable == StableRestore || ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		t.Fatalf("not up to date yet: ensured %s, phase %s", ensured, ro.Status.Phase)
	}
	done := *handedBack
	done.UpToDate = true
	routedStep(ro, Observation{Now: t0.Add(5 * time.Minute), Workload: &done}, true)
	_, ensured = routedStep(ro, Observation{Now: t0.Add(5 * time.Minute), Workload: &done}, false)
	if !ensured.Equal(Traffic{Stable: StableRestore, Canary: CanaryRemove}) {
		t.Fatalf("up to date: ensured %s", ensured)
	}
	act, _ = routedStep(ro, Observation{Now: t0.Add(6 * time.Minute), Workload: &done}, true)
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy {
		t.Fatalf("end: phase %s, message %s", ro.Status.Phase, ro.Status.Message)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "RolledBack" ||
		!strings.Contains(ro.Status.Message, "in batches") || !hasEvent(act, "RolledBack") {
		t.Fatalf("end: Succeeded %+v, message %q, events %+v", c, ro.Status.Message, act.Events)
	}
}

// Given a canary Deployment release routing traffic, with rollback-in-batch
// When the template goes back to v1
// Then it rolls back at once, and its event says why the annotation is
// ignored.
func TestNext_rollbackCanaryDeploymentWithTraffic_atOnceSayingWhy(t *testing.T) {
	ro := inStep(trafficRollout(), rolloutsv1beta1.ProgressingReasonInRolling, 3, rolloutsv1beta1.CanaryStepStatePaused, "")
	ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	back := &workload.Status{Replicas: 10, StableRevision: "v1", UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
	act, _ := routedStep(ro, Observation{Now: t0, Workload: back, BatchRelease: readyBatch(2)}, true)
	if reasonOf(&ro.Status) != rolloutsv1beta1.ProgressingReasonCancelling || act.BatchRelease == DeleteBatchRelease {
		t.Fatalf("reason %s, actions %+v", reasonOf(&ro.Status), act)
	}
	var msg string
	for _, e := range act.Events {
		if e.Reason == "RolledBack" {
			msg = e.Message
		}
	}
	if !strings.Contains(msg, "at once") || !strings.Contains(msg, rolloutsv1beta1.RollbackInBatchAnnotation+" ignored") || !strings.Contains(msg, "canary Deployment") {
		t.Fatalf("RolledBack event %q", msg)
	}
}

func hasEvent(act Actions, reason string) bool {
	for _, e := range act.Events {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// Given a canary Deployment Rollout routing traffic, without
// rollback-in-batch
// When the template goes back to v1
// Then its RolledBack event says it rolls back at once, without mentioning
// an annotation it does not carry.
func TestNext_rollbackWithoutTheAnnotation_eventNamesNoIgnoredAnnotation(t *testing.T) {
	ro := inStep(trafficRollout(), rolloutsv1beta1.ProgressingReasonInRolling, 3, rolloutsv1beta1.CanaryStepStatePaused, "")
	back := &workload.Status{Replicas: 10, StableRevision: "v1", UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
	act := apply(ro, Observation{Now: t0, Workload: back, BatchRelease: readyBatch(2)})
	for _, e := range act.Events {
		if e.Reason == "RolledBack" && (!strings.Contains(e.Message, "at once") || strings.Contains(e.Message, "ignored")) {
			t.Fatalf("RolledBack event %q", e.Message)
		}
	}
	if !hasEvent(act, "RolledBack") {
		t.Fatalf("events %+v", act.Events)
	}
}
