package canary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/workload"
)

// request is an abort or retry request for revision by ops at t.
func request(revision string, t time.Time) *abort.Request {
	return &abort.Request{Revision: revision, By: "ops", Via: "github-label", At: &t, Reason: "5xx", PullRequest: 7}
}

// atStep2Paused returns a Rollout of 1 / 50% / 100% paused at step 2 of
// the release of v2 (5 of 10 pods), released from t0.
func atStep2Paused(t *testing.T) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := rollout(step("1", nil), step("50%", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	apply(ro, Observation{Now: t0, Workload: releasing(5, 5), BatchRelease: readyBatch(1)})
	if ro.Status.CurrentStepIndex != 2 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("setup: step %d %s", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	return ro
}

// holding is the BatchRelease of an aborted release, holding (or held) on
// the stable revision.
func holding(state rolloutsv1beta1.StableHoldState) *BatchReleaseView {
	br := readyBatch(1)
	br.HoldStable, br.StableHold, br.Generation, br.ObservedGeneration = true, state, 3, 3
	return br
}

// abortedAndHeld aborts ro (at step 2) at t and drives it until held.
func abortedAndHeld(t *testing.T, ro *rolloutsv1beta1.Rollout, at time.Time) {
	t.Helper()
	apply(ro, Observation{Now: at, Workload: releasing(5, 5), BatchRelease: readyBatch(1), Abort: request("v2", at)})
	apply(ro, Observation{Now: at, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ro.Status.Aborted == nil || !ro.Status.Aborted.Held {
		t.Fatalf("not held: %s %+v %q", ro.Status.Phase, ro.Status.Aborted, ro.Status.Message)
	}
}

// TestNext_abortAtStep2_holdsOnStableThenSaysWhatToDo: an abort request
// for the release in progress records who aborted it and where, asks the
// BatchRelease to hold the workload on the stable revision, and once it is
// held says what to do.
func TestNext_abortAtStep2_holdsOnStableThenSaysWhatToDo(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	act := apply(ro, Observation{Now: at, Workload: releasing(5, 5), BatchRelease: readyBatch(1), Abort: request("v2", at)})
	ab := ro.Status.Aborted
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ab == nil || ab.Revision != "v2" || ab.StableRevision != "v1" ||
		ab.Step != 2 || ab.By != "ops" || ab.Via != "github-label" || ab.Reason != "5xx" || ab.Held {
		t.Fatalf("after the abort: %s %+v", ro.Status.Phase, ab)
	}
	if act.BatchRelease != EnsureBatchRelease || !act.HoldStable || act.Partition == nil || *act.Partition != 1 {
		t.Fatalf("actions %+v, want the BatchRelease to hold on stable", act)
	}
	if !hasEvent(act, "Aborted") || act.Approved == nil || act.Approved.Action != approval.ActionAbort || act.Approved.By != "ops" ||
		act.Approved.PullRequest != 7 {
		t.Fatalf("events %+v record %+v", act.Events, act.Approved)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionProgressing); c.Reason != rolloutsv1beta1.ProgressingReasonAborting {
		t.Fatalf("Progressing %+v", c)
	}

	act = apply(ro, Observation{Now: at, Workload: releasing(3, 3), BatchRelease: holding(rolloutsv1beta1.StableHoldHolding), Abort: request("v2", at)})
	if ro.Status.Aborted.Held || act.BatchRelease != KeepBatchRelease || !strings.Contains(ro.Status.Message, "3 still on revision v2") {
		t.Fatalf("while holding: %+v %+v %q", ro.Status.Aborted, act, ro.Status.Message)
	}

	act = apply(ro, Observation{Now: at, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at)})
	c := condition(ro, rolloutsv1beta1.RolloutConditionProgressing)
	if !ro.Status.Aborted.Held || c.Status != "False" || c.Reason != rolloutsv1beta1.ProgressingReasonAborted || !hasEvent(act, "StableHeld") {
		t.Fatalf("held: %+v %+v %+v", ro.Status.Aborted, c, act.Events)
	}
	for _, want := range []string{"by ops via github-label at step 2/3", "revert the commit in Git, or push a new one", "kubectl sluice retry web -n shop"} {
		if !strings.Contains(ro.Status.Message, want) {
			t.Errorf("message %q does not say %q", ro.Status.Message, want)
		}
	}
	if ro.Status.CurrentStepIndex != 2 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Errorf("step %d %s, want the step it was aborted at", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
}

// TestNext_abortAtEachStepState: whatever state the step is in, and with
// spec.strategy.paused, an abort request of the release aborts it.
func TestNext_abortAtEachStepState(t *testing.T) {
	for _, state := range []rolloutsv1beta1.CanaryStepState{
		rolloutsv1beta1.CanaryStepStateBeforeUpgrade, rolloutsv1beta1.CanaryStepStateUpgrade,
		rolloutsv1beta1.CanaryStepStateTrafficRouting, rolloutsv1beta1.CanaryStepStateMetricsAnalysis,
		rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.CanaryStepStateReady, "paused-by-spec",
	} {
		t.Run(string(state), func(t *testing.T) {
			ro := atStep2Paused(t)
			if state == "paused-by-spec" {
				ro.Spec.Strategy.Paused = true
			} else {
				ro.Status.CanaryStatus.CurrentStepState = state
			}
			at := t0.Add(time.Minute)
			act := apply(ro, Observation{Now: at, Workload: releasing(3, 3), BatchRelease: readyBatch(1), Abort: request("v2", at)})
			if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || !act.HoldStable {
				t.Fatalf("phase %s actions %+v", ro.Status.Phase, act)
			}
		})
	}
}

// TestNext_staleAbortRequest_abortsNothing: a request naming another
// revision aborts nothing and says why once it is new; one older than the
// release (left from an earlier one, or in Git) is silently ignored.
func TestNext_staleAbortRequest_abortsNothing(t *testing.T) {
	tests := []struct {
		name      string
		req       *abort.Request
		wantEvent bool
	}{
		{"another revision", request("v9", t0.Add(time.Minute)), true},
		{"older than the release", request("v2", t0.Add(-time.Hour)), false},
		{"without a time", &abort.Request{Revision: "v2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := atStep2Paused(t)
			act := apply(ro, Observation{Now: t0.Add(time.Minute), Workload: releasing(5, 5), BatchRelease: readyBatch(1), Abort: tt.req})
			if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || act.HoldStable || ro.Status.Aborted != nil {
				t.Fatalf("aborted: %s %+v", ro.Status.Phase, act)
			}
			if hasEvent(act, "AbortIgnored") != tt.wantEvent {
				t.Fatalf("events %+v, want AbortIgnored %v", act.Events, tt.wantEvent)
			}
			for _, e := range act.Events {
				if e.Reason == "AbortIgnored" && (!e.Once || !strings.Contains(e.Message, `"v9"`)) {
					t.Fatalf("event %+v: want a once-only event naming the revision", e)
				}
			}
		})
	}
}

// TestNext_whileAborted_reappliesAndApprovalsChangeNothing: the GitOps
// tool applying the same template again, approvals by status or
// annotation, spec.strategy.paused and a step jump leave the release
// aborted, held on stable, with nothing released; the approvals are
// refused saying what to do.
func TestNext_whileAborted_reappliesAndApprovalsChangeNothing(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	abortedAndHeld(t, ro, at)
	later := at.Add(time.Minute)

	// Re-applies: the same workload status, again and again.
	for range 2 {
		act := apply(ro, Observation{Now: later, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at)})
		if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || act.BatchRelease != KeepBatchRelease || len(act.Events) != 0 {
			t.Fatalf("re-apply: %s %+v", ro.Status.Phase, act)
		}
	}

	// kubectl-kruise rollout approve.
	ro.Status.CanaryStatus.CurrentStepState = rolloutsv1beta1.CanaryStepStateReady
	act := apply(ro, Observation{Now: later, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld)})
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || act.Approved != nil || !hasEvent(act, "ApprovalRefused") {
		t.Fatalf("status approval: %s %+v", ro.Status.CurrentStepState, act)
	}

	// The approve annotation, written after the abort.
	a := &approval.Approval{Revision: "v2", Step: 2, By: "dev", At: &later}
	act = apply(ro, Observation{Now: later, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Approval: a})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || act.Approved != nil || act.BatchRelease != KeepBatchRelease {
		t.Fatalf("annotation approval: %s %+v", ro.Status.Phase, act)
	}
	var refused *Event
	for i := range act.Events {
		if act.Events[i].Reason == "ApprovalRefused" {
			refused = &act.Events[i]
		}
	}
	if refused == nil || !refused.Once || !strings.Contains(refused.Message, "revert the commit in Git, or push a new one") {
		t.Fatalf("events %+v", act.Events)
	}

	// spec.strategy.paused toggled, and a step jump.
	ro.Spec.Strategy.Paused = true
	apply(ro, Observation{Now: later, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld)})
	ro.Spec.Strategy.Paused = false
	ro.Status.CanaryStatus.NextStepIndex = 3
	act = apply(ro, Observation{Now: later, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ro.Status.CurrentStepIndex != 2 || ro.Status.CanaryStatus.NextStepIndex != 3 ||
		act.BatchRelease != KeepBatchRelease {
		t.Fatalf("after paused and a jump: %s step %d next %d %+v", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CanaryStatus.NextStepIndex, act)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionProgressing); c.Reason != rolloutsv1beta1.ProgressingReasonAborted {
		t.Fatalf("Progressing %+v", c)
	}
}

// TestNext_retry_releasesTheAbortedRevisionFromStep1: a retry newer than
// the abort releases the same revision again from step 1, against the same
// stable revision, and is recorded; an older one, or one naming another
// revision, retries nothing (the latter says why); the abort request left
// on the Rollout does not abort the retried release.
func TestNext_retry_releasesTheAbortedRevisionFromStep1(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	abortedAndHeld(t, ro, at)

	apply(ro, Observation{Now: at, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld),
		Abort: request("v2", at), Retry: request("v2", at.Add(-time.Second))})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
		t.Fatalf("an older retry retried: %s", ro.Status.Phase)
	}
	act := apply(ro, Observation{Now: at, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld),
		Abort: request("v2", at), Retry: request("v9", at.Add(time.Minute))})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || !hasEvent(act, "RetryIgnored") {
		t.Fatalf("a retry of another revision: %s %+v", ro.Status.Phase, act.Events)
	}

	retryAt := at.Add(2 * time.Minute)
	act = apply(ro, Observation{Now: retryAt, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld),
		Abort: request("v2", at), Retry: request("v2", retryAt)})
	cs := ro.Status.CanaryStatus
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.Aborted != nil || cs.CurrentStepIndex != 1 ||
		cs.CanaryRevision != "v2" || cs.StableRevision != "v1" {
		t.Fatalf("after the retry: %s %+v %+v", ro.Status.Phase, ro.Status.Aborted, cs)
	}
	if !hasEvent(act, "Retried") || act.Approved == nil || act.Approved.Action != approval.ActionRetry || act.Approved.By != "ops" {
		t.Fatalf("retry events %+v record %+v", act.Events, act.Approved)
	}
	if act.BatchRelease != EnsureBatchRelease || act.HoldStable || act.Partition == nil || *act.Partition != 0 {
		t.Fatalf("retry actions %+v, want partition 0 without the hold", act)
	}
	act = apply(ro, Observation{Now: retryAt.Add(time.Minute), Workload: releasing(1, 1), BatchRelease: readyBatch(0),
		Abort: request("v2", at), Retry: request("v2", retryAt)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("the old abort request aborted the retried release: %s %s", ro.Status.Phase, ro.Status.CurrentStepState)
	}
}

// TestNext_revertSyncedWhileAborted_completesTheRollbackAtOnce: the
// template set back to the stable revision ends the abort: the workload is
// handed back and the Rollout ends Healthy, Succeeded=False RolledBack.
func TestNext_revertSyncedWhileAborted_completesTheRollbackAtOnce(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	abortedAndHeld(t, ro, at)
	reverted := &workload.Status{Replicas: 10, UpdatedReplicas: 10, UpdatedReadyReplicas: 10, StableRevision: "v1",
		UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
	act := apply(ro, Observation{Now: at, Workload: reverted, BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at)})
	if act.BatchRelease != EnsureBatchRelease || act.Partition != nil || act.HoldStable || act.Policy != rolloutsv1beta1.ImmediateFinalizingPolicy {
		t.Fatalf("actions %+v, want the workload handed back", act)
	}
	apply(ro, Observation{Now: at, Workload: &workload.Status{Replicas: 10, UpdatedReplicas: 10, UpdateRevision: "v1", UpToDate: true}, Abort: request("v2", at)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || ro.Status.Aborted != nil {
		t.Fatalf("phase %s aborted %+v", ro.Status.Phase, ro.Status.Aborted)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "False" || c.Reason != "RolledBack" ||
		!strings.Contains(c.Message, "aborted by ops via github-label at step 2") {
		t.Fatalf("Succeeded %+v", c)
	}
}

// TestNext_newRevisionWhileAborted_releasesItFromStep1: a new revision
// (neither the stable nor the aborted one) starts a new release from step
// 1 against the same stable revision.
func TestNext_newRevisionWhileAborted_releasesItFromStep1(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	abortedAndHeld(t, ro, at)
	v3 := releasing(0, 0)
	v3.UpdateRevision, v3.PodTemplateHash = "v3", "v3"
	act := apply(ro, Observation{Now: at.Add(time.Minute), Workload: v3, BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at)})
	cs := ro.Status.CanaryStatus
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.Aborted != nil || cs.CurrentStepIndex != 1 ||
		cs.CanaryRevision != "v3" || cs.StableRevision != "v1" || !hasEvent(act, "Restarted") {
		t.Fatalf("after v3: %s %+v %+v", ro.Status.Phase, cs, act.Events)
	}
	if act.BatchRelease != EnsureBatchRelease || act.HoldStable || *act.Partition != 0 {
		t.Fatalf("actions %+v", act)
	}
}

// TestNext_abortOfAKindThatCannotHold_blocksSayingWhy: a workload whose
// kind cannot run the stable revision again without its template changing
// keeps the release aborted, releases nothing more, and reports Stalled
// with the BatchRelease's reason.
func TestNext_abortOfAKindThatCannotHold_blocksSayingWhy(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	apply(ro, Observation{Now: at, Workload: releasing(5, 5), BatchRelease: readyBatch(1), Abort: request("v2", at)})
	br := holding(rolloutsv1beta1.StableHoldBlocked)
	br.Message = "DaemonSet ds runs new pods from its template only: revert the commit in Git"
	act := apply(ro, Observation{Now: at, Workload: releasing(5, 5), BatchRelease: br, Abort: request("v2", at)})
	c := condition(ro, rolloutsv1beta1.RolloutConditionStalled)
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || c == nil || c.Status != "True" || c.Reason != StalledReasonCannotHoldStable ||
		!strings.Contains(c.Message, "revert the commit in Git") || !hasEvent(act, StalledReasonCannotHoldStable) || act.BatchRelease != KeepBatchRelease {
		t.Fatalf("blocked: %s %+v %+v", ro.Status.Phase, c, act)
	}
}

// TestNext_abortWithTraffic_routesToStableBeforeThePodsMove: the requests
// go to the stable pods (narrowed stable Service, routes restored, canary
// Service removed) before the BatchRelease is asked to hold; once held,
// the Services and routes get back what they had.
func TestNext_abortWithTraffic_routesToStableBeforeThePodsMove(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	shifted := Traffic{Stable: StableNarrow, StableRevision: "v1", Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](20)}
	obs := Observation{Now: at, Workload: releasing(5, 5), BatchRelease: readyBatch(1), Abort: request("v2", at),
		Traffic: &TrafficObservation{Ensured: shifted, Converged: true}}
	act := apply(ro, obs)
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || act.HoldStable {
		t.Fatalf("held before the traffic went back: %s %+v", ro.Status.Phase, act)
	}
	obs.Traffic = &TrafficObservation{}
	want := Wanted(ro, obs)
	if want.Stable != StableNarrow || want.StableRevision != "v1" || want.Routes != RoutesRestore || want.Canary != CanaryRemove {
		t.Fatalf("traffic while aborting: %+v", want)
	}
	obs.Traffic = &TrafficObservation{Ensured: want, Converged: true}
	obs.Now = at.Add(time.Minute) // past the grace period
	act = apply(ro, obs)
	if !act.HoldStable {
		t.Fatalf("not held once the traffic is on stable: %+v %q", act, ro.Status.Message)
	}
	obs.BatchRelease, obs.Workload = holding(rolloutsv1beta1.StableHoldHeld), releasing(0, 0)
	apply(ro, obs)
	if !ro.Status.Aborted.Held || ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
		t.Fatalf("held: %+v", ro.Status.Aborted)
	}
	obs.Traffic = &TrafficObservation{}
	if got := Wanted(ro, obs); got.Stable != StableRestore || got.Routes != RoutesRestore || got.Canary != CanaryRemove {
		t.Fatalf("traffic once held: %+v", got)
	}
}

// TestNext_abortWhenNothingCanBeAborted_saysWhy: a fresh abort request of
// a Healthy Rollout, or of a release that has done its steps, aborts
// nothing and says why.
func TestNext_abortWhenNothingCanBeAborted_saysWhy(t *testing.T) {
	ro := rollout(step("1", nil), step("100%", nil))
	w := &workload.Status{Replicas: 3, UpdatedReplicas: 3, UpdatedReadyReplicas: 3, UpdateRevision: "v1", UpToDate: true}
	apply(ro, Observation{Now: t0, Workload: w})
	act := apply(ro, Observation{Now: t0.Add(time.Minute), Workload: w, Abort: request("v1", t0.Add(time.Minute))})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || !hasEvent(act, "AbortIgnored") {
		t.Fatalf("healthy: %s %+v", ro.Status.Phase, act.Events)
	}
	act = apply(ro, Observation{Now: t0.Add(time.Minute), Workload: w, Retry: request("v1", t0.Add(time.Minute))})
	if !hasEvent(act, "RetryIgnored") {
		t.Fatalf("retry while healthy: %+v", act.Events)
	}
}

// TestNext_abortAndRetryInTheSameSecond_theNewerWins: a retry written in
// the same second as the abort it retries (and as the restart it causes)
// releases the revision again, and the abort left on the Rollout does not
// abort it again: requests are ordered to the microsecond.
func TestNext_abortAndRetryInTheSameSecond_theNewerWins(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute + 100*time.Millisecond)
	abortedAndHeld(t, ro, at)
	stored(t, ro)
	retryAt := at.Add(200 * time.Millisecond)
	for i := range 3 {
		apply(ro, Observation{Now: retryAt.Add(time.Duration(i) * 100 * time.Millisecond), Workload: releasing(0, 0),
			BatchRelease: holding(rolloutsv1beta1.StableHoldHeld), Abort: request("v2", at), Retry: request("v2", retryAt)})
		stored(t, ro)
		if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.Aborted != nil ||
			condition(ro, rolloutsv1beta1.RolloutConditionProgressing).Reason != rolloutsv1beta1.ProgressingReasonInRolling {
			t.Fatalf("look %d after the retry: %s %+v %+v", i, ro.Status.Phase, ro.Status.Aborted, condition(ro, rolloutsv1beta1.RolloutConditionProgressing))
		}
	}
	// A newer abort aborts it again.
	again := retryAt.Add(300 * time.Millisecond)
	apply(ro, Observation{Now: again, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld),
		Abort: request("v2", again), Retry: request("v2", retryAt)})
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
		t.Fatalf("a newer abort: %s", ro.Status.Phase)
	}
}

// stored round-trips ro's status through JSON, as the API server stores it:
// condition times keep whole seconds.
func stored(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	b, err := json.Marshal(ro.Status)
	if err != nil {
		t.Fatal(err)
	}
	st := rolloutsv1beta1.RolloutStatus{}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	ro.Status = st
}

// TestNext_retryAtTheStepItWasAbortedAt_liftsTheHold: a release aborted at
// step 1 and retried asks for the same partition: the plan is still
// ensured, without the hold, and the batch the BatchRelease reported ready
// before the hold does not count.
func TestNext_retryAtTheStepItWasAbortedAt_liftsTheHold(t *testing.T) {
	ro := rollout(step("1", nil), step("50%", nil), step("100%", nil))
	apply(ro, Observation{Now: t0, Workload: releasing(0, 0)})
	apply(ro, Observation{Now: t0, Workload: releasing(1, 1), BatchRelease: readyBatch(0)})
	at := t0.Add(time.Minute)
	held := readyBatch(0)
	held.HoldStable, held.StableHold, held.Generation, held.ObservedGeneration = true, rolloutsv1beta1.StableHoldHeld, 3, 3
	apply(ro, Observation{Now: at, Workload: releasing(1, 1), BatchRelease: readyBatch(0), Abort: request("v2", at)})
	apply(ro, Observation{Now: at, Workload: releasing(0, 0), BatchRelease: held, Abort: request("v2", at)})
	if !ro.Status.Aborted.Held {
		t.Fatalf("not held: %+v", ro.Status.Aborted)
	}
	retryAt := at.Add(time.Minute)
	act := apply(ro, Observation{Now: retryAt, Workload: releasing(0, 0), BatchRelease: held, Abort: request("v2", at), Retry: request("v2", retryAt)})
	if act.BatchRelease != EnsureBatchRelease || act.HoldStable || act.Partition == nil || *act.Partition != 0 {
		t.Fatalf("retry actions %+v, want partition 0 ensured without the hold", act)
	}
	if ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("step 1 paused on the batch reported before the hold")
	}
}

// TestNext_approvalBeforeARetry_approvesNothingOfTheRetriedRelease: an
// approval of step 1 given while the release was aborted does not approve
// the retried release; one given after the retry does.
func TestNext_approvalBeforeARetry_approvesNothingOfTheRetriedRelease(t *testing.T) {
	ro := atStep2Paused(t)
	at := t0.Add(time.Minute)
	abortedAndHeld(t, ro, at)
	during := at.Add(time.Second)
	old := &approval.Approval{Revision: "v2", Step: 3, By: "dev", At: &during}
	retryAt := at.Add(time.Minute)
	obs := Observation{Now: retryAt, Workload: releasing(0, 0), BatchRelease: holding(rolloutsv1beta1.StableHoldHeld),
		Abort: request("v2", at), Retry: request("v2", retryAt), Approval: old}
	apply(ro, obs)
	obs.BatchRelease, obs.Workload = readyBatch(0), releasing(1, 1)
	act := apply(ro, obs)
	if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || act.Approved != nil {
		t.Fatalf("an approval from before the retry approved the retried release: step %d %s %+v", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, act.Approved)
	}
	later := retryAt.Add(time.Minute)
	obs.Approval = &approval.Approval{Revision: "v2", Step: 1, By: "dev", At: &later}
	obs.Now = later
	act = apply(ro, obs)
	if act.Approved == nil || act.Approved.By != "dev" || ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("an approval after the retry: step %d %+v", ro.Status.CurrentStepIndex, act.Approved)
	}
}
