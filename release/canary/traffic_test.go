package canary

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// trafficRollout is a canary-style Rollout routing through an nginx
// Ingress: 20% / a header match / 50% / 100% without traffic.
func trafficRollout() *rolloutsv1beta1.Rollout {
	header := rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user-agent", Value: "pc"}}}
	s1, s2, s3, s4 := step("1", nil), step("1", nil), step("50%", nil), step("100%", nil)
	s1.Traffic = ptr("20%")
	s2.Matches = []rolloutsv1beta1.HttpRouteMatch{header}
	s3.Traffic = ptr("50%")
	ro := rollout(s1, s2, s3, s4)
	ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = true
	ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{
		Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"},
	}}
	return ro
}

// inStep sets ro's status to a release at step idx in state, with the
// Progressing reason and finalising step given.
func inStep(ro *rolloutsv1beta1.Rollout, reason string, idx int32, state rolloutsv1beta1.CanaryStepState, fin rolloutsv1beta1.FinalisingStepType) *rolloutsv1beta1.Rollout {
	ro.Status = rolloutsv1beta1.RolloutStatus{
		Phase:      rolloutsv1beta1.RolloutPhaseProgressing,
		Conditions: []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionProgressing, Status: corev1.ConditionTrue, Reason: reason}},
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{
				StableRevision: "v1", PodTemplateHash: "v2", CurrentStepIndex: idx, CurrentStepState: state, FinalisingStep: fin,
			},
			CanaryRevision: "v2",
		},
	}
	return ro
}

func TestWanted_orderOfOperations(t *testing.T) {
	const (
		inRolling  = rolloutsv1beta1.ProgressingReasonInRolling
		finalising = rolloutsv1beta1.ProgressingReasonFinalising
		cancelling = rolloutsv1beta1.ProgressingReasonCancelling
	)
	header := []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user-agent", Value: "pc"}}}}
	narrowOnly := Traffic{Stable: StableNarrow, StableRevision: "v1"}
	cleanStart := Traffic{Stable: StableNarrow, StableRevision: "v1", Routes: RoutesRestore, Canary: CanaryRemove}
	everythingBack := Traffic{Stable: StableRestore, Routes: RoutesRestore, Canary: CanaryRemove}
	shift := func(w *int32, m []rolloutsv1beta1.HttpRouteMatch) Traffic {
		return Traffic{Stable: StableNarrow, StableRevision: "v1", Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: w, Matches: m}
	}
	blueGreen := func() *rolloutsv1beta1.Rollout {
		ro := trafficRollout()
		ro.Spec.Strategy.BlueGreen = &rolloutsv1beta1.BlueGreenStrategy{Steps: ro.Spec.Strategy.Canary.Steps, TrafficRoutings: ro.Spec.Strategy.Canary.TrafficRoutings}
		ro.Spec.Strategy.Canary = nil
		return ro
	}
	inPlace := func() *rolloutsv1beta1.Rollout {
		ro := trafficRollout()
		ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = false
		return ro
	}
	tests := []struct {
		name    string
		ro      *rolloutsv1beta1.Rollout
		obs     Observation
		routing bool
		want    Traffic
	}{
		{"no routes: nothing", inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateTrafficRouting, ""), Observation{}, false, Traffic{}},
		{"first step before upgrade: stable narrowed, leftovers of an earlier release removed",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateBeforeUpgrade, ""), Observation{}, true, cleanStart},
		{"first step upgrading: nothing routed before the pods are ready",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateUpgrade, ""), Observation{}, true, cleanStart},
		{"first step's pods ready: 20%",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStateTrafficRouting, ""), Observation{}, true, shift(ptr[int32](20), nil)},
		{"first step paused: still 20%",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{}, true, shift(ptr[int32](20), nil)},
		{"second step upgrading: the routes keep the first step's traffic",
			inStep(trafficRollout(), inRolling, 2, rolloutsv1beta1.CanaryStepStateUpgrade, ""), Observation{}, true, narrowOnly},
		{"second step routed: the header match alone",
			inStep(trafficRollout(), inRolling, 2, rolloutsv1beta1.CanaryStepStateTrafficRouting, ""), Observation{}, true, shift(nil, header)},
		{"third step routed: 50%",
			inStep(trafficRollout(), inRolling, 3, rolloutsv1beta1.CanaryStepStateMetricsAnalysis, ""), Observation{}, true, shift(ptr[int32](50), nil)},
		{"a plain step after traffic steps: routing removed before upgrading",
			inStep(trafficRollout(), inRolling, 4, rolloutsv1beta1.CanaryStepStateBeforeUpgrade, ""), Observation{}, true, everythingBack},
		{"success, canary: stable Service, routes, canary Service, before the hand-back",
			inStep(trafficRollout(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, ""), Observation{}, true, everythingBack},
		{"success, finished", inStep(trafficRollout(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.FinalisingStepEnd),
			Observation{}, true, Traffic{}},
		{"success, blue-green: all traffic to the new pods, stable Service restored",
			inStep(blueGreen(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.FinalisingStepRouteTrafficToNew), Observation{}, true,
			Traffic{Stable: StableRestore, Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](100)}},
		{"success, blue-green, after the hand-back: routes restored, canary Service removed",
			inStep(blueGreen(), finalising, 4, rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.FinalisingStepRouteTrafficToStable), Observation{}, true,
			Traffic{Routes: RoutesRestore, Canary: CanaryRemove}},
		{"rollback: routes to stable first, the stable Service stays narrowed",
			inStep(trafficRollout(), cancelling, 2, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{}, true, Traffic{Routes: RoutesRestore}},
		{"rollback, workload on the stable revision: stable Service restored, canary Service removed",
			inStep(trafficRollout(), cancelling, 2, rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.FinalisingStepRestoreStableService), Observation{}, true,
			Traffic{Stable: StableRestore, Canary: CanaryRemove}},
		{"deleted mid-release: everything back",
			inStep(trafficRollout(), inRolling, 2, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{Deleting: true}, true, everythingBack},
		{"workload gone mid-release: everything back",
			inStep(trafficRollout(), inRolling, 2, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{}, true, everythingBack},
		{"workload disabled mid-release: everything back",
			inStep(trafficRollout(), inRolling, 2, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{Workload: &workload.Status{Disabled: "paused"}}, true, everythingBack},
		{"deleted after a completed release: nothing",
			inStep(trafficRollout(), inRolling, 4, rolloutsv1beta1.CanaryStepStateCompleted, ""), Observation{Deleting: true}, true, Traffic{}},
		{"BatchRelease deleted by hand, handing the workload back: the stable Service is not narrowed again",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{BatchRelease: &BatchReleaseView{Deleting: true}}, true,
			Traffic{Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](20)}},
		{"BatchRelease deleted leaving the workload held: the stable Service stays narrowed",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""), Observation{BatchRelease: &BatchReleaseView{Deleting: true, SkipHandBack: true}}, true,
			shift(ptr[int32](20), nil)},
		{"BatchRelease deleted by hand while the workload goes back to the narrowed revision: it stays narrowed",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""),
			Observation{BatchRelease: &BatchReleaseView{Deleting: true}, Workload: &workload.Status{Replicas: 10, StableRevision: "v1", UpdateRevision: "v1", PodTemplateHash: "v1"}}, true,
			shift(ptr[int32](20), nil)},
		{"the workload handed back outside the release (no longer marked in progress): the stable Service gets its own selector back",
			inStep(trafficRollout(), inRolling, 1, rolloutsv1beta1.CanaryStepStatePaused, ""),
			Observation{Workload: &workload.Status{Replicas: 10, StableRevision: "v1", UpdateRevision: "v2", PodTemplateHash: "v2"}}, true,
			Traffic{Stable: StableRestore, Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](20)}},
		{"in place, a step releasing every pod: the stable Service is not narrowed",
			inStep(inPlace(), inRolling, 4, rolloutsv1beta1.CanaryStepStateBeforeUpgrade, ""), Observation{}, true, everythingBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := tt.obs
			if obs.Workload == nil && !strings.HasPrefix(tt.name, "workload gone") {
				obs.Workload = releasing(1, 1)
			}
			if tt.routing {
				obs.Traffic = &TrafficObservation{}
			}
			if got := Wanted(tt.ro, obs); !got.Equal(tt.want) {
				t.Fatalf("Wanted = %+v (%s)\nwant %+v (%s)", got, got, tt.want, tt.want)
			}
		})
	}
}

func TestWanted_inPlaceLastStepWithTraffic_restoresStableInsteadOfNarrowing(t *testing.T) {
	ro := trafficRollout()
	ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = false
	ro.Spec.Strategy.Canary.Steps[3].Traffic = ptr("100%")
	inStep(ro, rolloutsv1beta1.ProgressingReasonInRolling, 4, rolloutsv1beta1.CanaryStepStateTrafficRouting, "")
	got := Wanted(ro, Observation{Workload: releasing(10, 10), Traffic: &TrafficObservation{}})
	want := Traffic{Stable: StableRestore, Canary: CanaryEnsure, CanaryRevision: "v2", Routes: RoutesShift, Weight: ptr[int32](100)}
	if !got.Equal(want) {
		t.Fatalf("Wanted = %s, want %s", got, want)
	}
}

// routedStep runs Next the way the controller does: the Services and
// routes were made to carry Wanted for the stored status, and converged
// says whether they already did.
func routedStep(ro *rolloutsv1beta1.Rollout, obs Observation, converged bool) (Actions, Traffic) {
	obs.Traffic = &TrafficObservation{Grace: 3 * time.Second}
	ensured := Wanted(ro, obs)
	obs.Traffic.Ensured, obs.Traffic.Converged = ensured, converged
	return apply(ro, obs), ensured
}

func TestNext_trafficStep_waitsForRoutesAndGrace(t *testing.T) {
	ro := trafficRollout()
	br := readyBatch(0)
	routedStep(ro, Observation{Now: t0, Workload: releasing(0, 0)}, true)
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade {
		t.Fatalf("started in %s: upgraded before the stable Service was narrowed", ro.Status.CurrentStepState)
	}
	_, ensured := routedStep(ro, Observation{Now: t0, Workload: releasing(0, 0)}, false)
	if ensured.Stable != StableNarrow || ensured.Routes == RoutesShift || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade {
		t.Fatalf("narrowing: ensured %s, state %s", ensured, ro.Status.CurrentStepState)
	}
	// Converged, but the grace period since the change has not passed.
	act, _ := routedStep(ro, Observation{Now: t0.Add(time.Second), Workload: releasing(0, 0)}, true)
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade || act.RequeueAfter != 2*time.Second {
		t.Fatalf("within the grace period: %s, requeue %v", ro.Status.CurrentStepState, act.RequeueAfter)
	}
	routedStep(ro, Observation{Now: t0.Add(3 * time.Second), Workload: releasing(0, 0)}, true)
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
		t.Fatalf("after the grace period: %s", ro.Status.CurrentStepState)
	}
	// Pods ready: the step routes, but does not pause before the routes
	// carry 20%.
	now := t0.Add(time.Minute)
	routedStep(ro, Observation{Now: now, Workload: releasing(1, 1), BatchRelease: br}, true)
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateTrafficRouting {
		t.Fatalf("pods ready: %s", ro.Status.CurrentStepState)
	}
	_, ensured = routedStep(ro, Observation{Now: now, Workload: releasing(1, 1), BatchRelease: br}, false)
	if ensured.Routes != RoutesShift || *ensured.Weight != 20 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateTrafficRouting {
		t.Fatalf("routing: ensured %s, state %s", ensured, ro.Status.CurrentStepState)
	}
	if c := condition(ro, TrafficRoutedCondition); c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("TrafficRouted while changing: %+v", c)
	}
	routedStep(ro, Observation{Now: now.Add(3 * time.Second), Workload: releasing(1, 1), BatchRelease: br}, true)
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("routed: %s", ro.Status.CurrentStepState)
	}
	if c := condition(ro, TrafficRoutedCondition); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("TrafficRouted once routed: %+v", c)
	}
}

func TestNext_trafficError_reportedAndRetried(t *testing.T) {
	ro := trafficRollout()
	routedStep(ro, Observation{Now: t0, Workload: releasing(0, 0)}, true)
	obs := Observation{Now: t0, Workload: releasing(0, 0), Traffic: &TrafficObservation{Grace: 3 * time.Second, Err: "stable Service web not found"}}
	obs.Traffic.Ensured = Wanted(ro, obs)
	act := apply(ro, obs)
	c := condition(ro, TrafficRoutedCondition)
	if c == nil || c.Status != corev1.ConditionFalse || c.Message != "stable Service web not found" || act.RequeueAfter != 3*time.Second {
		t.Fatalf("condition %+v, requeue %v", c, act.RequeueAfter)
	}
	if len(act.Events) != 1 || act.Events[0].Reason != "RoutingFailed" || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateBeforeUpgrade {
		t.Fatalf("events %+v, state %s", act.Events, ro.Status.CurrentStepState)
	}
}

func TestNext_rollbackWithTraffic_stableServiceRestoredOnlyOnStablePods(t *testing.T) {
	ro := inStep(trafficRollout(), rolloutsv1beta1.ProgressingReasonInRolling, 2, rolloutsv1beta1.CanaryStepStatePaused, "")
	back := &workload.Status{Replicas: 10, UpdatedReplicas: 1, UpdatedReadyReplicas: 1, StableRevision: "v1",
		UpdateRevision: "v1", PodTemplateHash: "v1", InRollback: true, InProgressRollout: "web"}
	br := readyBatch(1)

	// The rollback is seen: the routes go back to stable before anything
	// else, and the workload stays held meanwhile.
	act, _ := routedStep(ro, Observation{Now: t0, Workload: back, BatchRelease: br}, true)
	if reasonOf(&ro.Status) != rolloutsv1beta1.ProgressingReasonCancelling || act.BatchRelease != KeepBatchRelease {
		t.Fatalf("rollback seen: %s, actions %+v", reasonOf(&ro.Status), act)
	}
	act, ensured := routedStep(ro, Observation{Now: t0, Workload: back, BatchRelease: br}, false)
	if !ensured.Equal(Traffic{Routes: RoutesRestore}) || act.BatchRelease != KeepBatchRelease ||
		ro.Status.CanaryStatus.FinalisingStep != rolloutsv1beta1.FinalisingStepRouteTrafficToStable {
		t.Fatalf("routing back: ensured %s, actions %+v, finalising %s", ensured, act, ro.Status.CanaryStatus.FinalisingStep)
	}
	// Routes back and the grace period over: the workload is handed back.
	act, _ = routedStep(ro, Observation{Now: t0.Add(3 * time.Second), Workload: back, BatchRelease: br}, true)
	if act.BatchRelease != EnsureBatchRelease || act.Partition != nil || act.Policy != rolloutsv1beta1.ImmediateFinalizingPolicy {
		t.Fatalf("hand-back: actions %+v", act)
	}
	// Handed back, the new revision's pods still run: the stable Service
	// stays narrowed.
	handedBack := *back
	handedBack.InProgressRollout = ""
	_, ensured = routedStep(ro, Observation{Now: t0.Add(4 * time.Second), Workload: &handedBack}, true)
	if ensured.Stable == StableRestore || ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		t.Fatalf("new pods still running: ensured %s, phase %s", ensured, ro.Status.Phase)
	}
	// Only stable pods left: the stable Service is restored, the canary
	// Service removed, then the release ends.
	stable := &workload.Status{Replicas: 10, UpdatedReplicas: 10, UpdatedReadyReplicas: 10, StableRevision: "v1", UpdateRevision: "v1", PodTemplateHash: "v1", UpToDate: true}
	routedStep(ro, Observation{Now: t0.Add(5 * time.Second), Workload: stable}, true)
	_, ensured = routedStep(ro, Observation{Now: t0.Add(5 * time.Second), Workload: stable}, false)
	if !ensured.Equal(Traffic{Stable: StableRestore, Canary: CanaryRemove}) || ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		t.Fatalf("restoring: ensured %s, phase %s", ensured, ro.Status.Phase)
	}
	routedStep(ro, Observation{Now: t0.Add(9 * time.Second), Workload: stable}, true)
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || ro.Status.CanaryStatus.FinalisingStep != rolloutsv1beta1.FinalisingStepEnd {
		t.Fatalf("end: %s, finalising %s", ro.Status.Phase, ro.Status.CanaryStatus.FinalisingStep)
	}
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Reason != "RolledBack" {
		t.Fatalf("Succeeded %+v", c)
	}
}

func TestNext_deletedWithTraffic_restoresBeforeHandingBack(t *testing.T) {
	ro := inStep(trafficRollout(), rolloutsv1beta1.ProgressingReasonInRolling, 2, rolloutsv1beta1.CanaryStepStatePaused, "")
	obs := Observation{Now: t0, Deleting: true, Workload: releasing(1, 1), BatchRelease: readyBatch(1)}
	routedStep(ro, obs, true)
	act, ensured := routedStep(ro, obs, false)
	if !ensured.Equal(Traffic{Stable: StableRestore, Routes: RoutesRestore, Canary: CanaryRemove}) || act.BatchRelease != KeepBatchRelease || act.RemoveFinalizer {
		t.Fatalf("restoring: ensured %s, actions %+v", ensured, act)
	}
	obs.Now = t0.Add(3 * time.Second)
	act, _ = routedStep(ro, obs, true)
	if act.BatchRelease != EnsureBatchRelease || act.Partition != nil {
		t.Fatalf("after restoring: actions %+v", act)
	}
}

func TestSequence(t *testing.T) {
	type steps = []rolloutsv1beta1.FinalisingStepType
	const (
		toNew         = rolloutsv1beta1.FinalisingStepRouteTrafficToNew
		toStable      = rolloutsv1beta1.FinalisingStepRouteTrafficToStable
		restoreStable = rolloutsv1beta1.FinalisingStepRestoreStableService
		removeCanary  = rolloutsv1beta1.FinalisingStepRemoveCanaryService
	)
	tests := []struct {
		name      string
		kind      finishKind
		blueGreen bool
		pre, post steps
	}{
		{"canary success", finishSuccess, false, steps{restoreStable, toStable, removeCanary}, nil},
		{"blue-green success", finishSuccess, true, steps{toNew, restoreStable}, steps{toStable, removeCanary}},
		{"rollback", finishRollback, false, steps{toStable}, steps{restoreStable, removeCanary}},
		{"blue-green rollback", finishRollback, true, steps{toStable}, steps{restoreStable, removeCanary}},
		{"cancel", finishCancel, false, steps{restoreStable, toStable, removeCanary}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pre, post := sequence(tt.kind, tt.blueGreen)
			if !equalSteps(pre, tt.pre) || !equalSteps(post, tt.post) {
				t.Fatalf("sequence = %v / %v, want %v / %v", pre, post, tt.pre, tt.post)
			}
		})
	}
}

func equalSteps(a, b []rolloutsv1beta1.FinalisingStepType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
