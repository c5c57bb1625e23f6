package canary

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
)

// The order of operations on traffic is decided here, as a Traffic for
// each point of a release: what the Services and routes should carry. The
// controller makes them carry it (one layer at a time: the stable Service,
// the canary Service, the routes, then the canary Service's removal) and
// reports in TrafficObservation whether they already did. The machine only
// moves on once they did and the grace period since the last change has
// passed, so that:
//   - a step's weight and matches are applied only once its pods are ready
//     (StepTrafficRouting comes after StepUpgrade);
//   - the stable Service is narrowed to the stable pods before the first
//     new pod exists, so matches never leak to them;
//   - on rollback, traffic returns to the stable pods before the workload
//     is handed back, and the stable Service is restored only once the
//     workload runs the stable revision alone;
//   - a step without traffic after traffic steps removes the routing
//     before it releases more pods;
//   - a rollback in batches keeps every request on the rollback target's
//     pods, from before its first pod is replaced until the workload runs
//     the target alone;
//   - an abort sends every request to the stable pods before any pod moves
//     back, and gives the Services and routes back only once every pod runs
//     the stable revision.

// TrafficRoutedCondition is True when the Services and routes carry what
// the release wants at its current point, and False while they change
// (its last update time is that of the last change, which the grace period
// counts from) or cannot be changed (the message says why).
const TrafficRoutedCondition rolloutsv1beta1.RolloutConditionType = "TrafficRouted"

// StableAction says what to do with the stable Services.
type StableAction string

// The stable Service actions.
const (
	// StableKeep leaves the stable Services as they are.
	StableKeep StableAction = ""
	// StableNarrow makes them select only the stable pods.
	StableNarrow StableAction = "Narrow"
	// StableRestore gives them back their own selectors.
	StableRestore StableAction = "Restore"
)

// CanaryAction says what to do with the canary Services.
type CanaryAction string //nolint:revive // pairs with StableAction and RoutesAction

// The canary Service actions.
const (
	// CanaryKeep leaves the canary Services as they are.
	CanaryKeep CanaryAction = ""
	// CanaryEnsure creates or updates them to select the new pods.
	CanaryEnsure CanaryAction = "Ensure"
	// CanaryRemove deletes them (after the routes no longer use them).
	CanaryRemove CanaryAction = "Remove"
)

// RoutesAction says what to do with the routes.
type RoutesAction string

// The route actions.
const (
	// RoutesKeep leaves the routes as they are.
	RoutesKeep RoutesAction = ""
	// RoutesShift makes them carry Weight, Matches and
	// RequestHeaderModifier.
	RoutesShift RoutesAction = "Shift"
	// RoutesRestore gives them back as they were before the release.
	RoutesRestore RoutesAction = "Restore"
)

// Traffic is what the Services and routes of a Rollout should carry at one
// point of a release.
type Traffic struct {
	// Stable is what to do with the stable Services.
	Stable StableAction
	// StableRevision is the revision label value the narrowed stable
	// Services select.
	StableRevision string
	// Canary is what to do with the canary Services.
	Canary CanaryAction
	// CanaryRevision is the revision label value the canary Services select.
	CanaryRevision string
	// Routes is what to do with the routes.
	Routes RoutesAction
	// Weight is the percentage of requests sent to the new revision; nil
	// sends none by weight.
	Weight *int32
	// Matches send the requests they match to the new revision.
	Matches []rolloutsv1beta1.HttpRouteMatch
	// RequestHeaderModifier changes the headers of the new revision's
	// requests.
	RequestHeaderModifier *rolloutsv1beta1.HTTPHeaderFilter
}

// Idle reports whether t leaves everything as it is.
func (t Traffic) Idle() bool {
	return t.Stable == StableKeep && t.Canary == CanaryKeep && t.Routes == RoutesKeep
}

// Equal reports whether t and o ask for the same.
func (t Traffic) Equal(o Traffic) bool {
	return apiequality.Semantic.DeepEqual(t, o)
}

// String describes t for messages.
func (t Traffic) String() string {
	var parts []string
	switch t.Routes {
	case RoutesShift:
		var what []string
		if t.Weight != nil {
			what = append(what, fmt.Sprintf("%d%% of requests", *t.Weight))
		}
		if len(t.Matches) > 0 {
			what = append(what, fmt.Sprintf("requests matching %d match(es)", len(t.Matches)))
		}
		if len(what) == 0 {
			what = append(what, "no requests")
		}
		parts = append(parts, strings.Join(what, " and ")+" to the new revision")
	case RoutesRestore:
		parts = append(parts, "routes as before the release")
	case RoutesKeep:
	}
	switch t.Stable {
	case StableNarrow:
		parts = append(parts, "stable Service narrowed to revision "+t.StableRevision)
	case StableRestore:
		parts = append(parts, "stable Service restored")
	case StableKeep:
	}
	switch t.Canary {
	case CanaryEnsure:
		parts = append(parts, "canary Service selecting revision "+t.CanaryRevision)
	case CanaryRemove:
		parts = append(parts, "no canary Service")
	case CanaryKeep:
	}
	return strings.Join(parts, "; ")
}

// TrafficObservation is what the controller saw of a Rollout's traffic
// before calling Next. It is nil for a Rollout without routes to drive.
type TrafficObservation struct {
	// Ensured is the Traffic the controller made the Services and routes
	// carry: Wanted for the status as it was stored.
	Ensured Traffic
	// Converged is true when they already carried it: nothing changed.
	Converged bool
	// Pending is the finishing step of the first layer that had to change,
	// when it is one (RestoreStableService, RouteTrafficToStable,
	// RemoveCanaryService, FinalisingStepRouteTrafficToNew).
	Pending rolloutsv1beta1.FinalisingStepType
	// Progress says what changed, for messages.
	Progress string
	// Err says why the Services or routes could not be changed.
	Err string
	// Grace is how long to wait after a change before the next one.
	Grace time.Duration
	// StableRevision is the revision most pods not on the update revision
	// run, for narrowing the stable Service before the workload records its
	// stable revision.
	StableRevision string
}

// Wanted returns what the Services and routes of ro should carry at the
// point of the release its stored status describes, given obs (obs.Traffic
// must be set, but for its Ensured and Converged fields).
func Wanted(ro *rolloutsv1beta1.Rollout, obs Observation) Traffic {
	if p, ok := progress.Of(ro); ok {
		return wanted(ro, &ro.Status, &p, obs)
	}
	return wanted(ro, &ro.Status, nil, obs)
}

// finishKind is why a release ends.
type finishKind int

const (
	finishSuccess finishKind = iota
	finishRollback
	finishCancel // disabled, deleted, or the workload is gone
)

// sequence returns the finishing steps on traffic before the workload is
// handed back (pre) and after it runs one revision again (post).
func sequence(kind finishKind, blueGreen bool) (pre, post []rolloutsv1beta1.FinalisingStepType) {
	const (
		toNew         = rolloutsv1beta1.FinalisingStepRouteTrafficToNew
		toStable      = rolloutsv1beta1.FinalisingStepRouteTrafficToStable
		restoreStable = rolloutsv1beta1.FinalisingStepRestoreStableService
		removeCanary  = rolloutsv1beta1.FinalisingStepRemoveCanaryService
	)
	switch {
	case kind == finishRollback:
		return []rolloutsv1beta1.FinalisingStepType{toStable}, []rolloutsv1beta1.FinalisingStepType{restoreStable, removeCanary}
	case kind == finishSuccess && blueGreen:
		return []rolloutsv1beta1.FinalisingStepType{toNew, restoreStable}, []rolloutsv1beta1.FinalisingStepType{toStable, removeCanary}
	}
	return []rolloutsv1beta1.FinalisingStepType{restoreStable, toStable, removeCanary}, nil
}

// stagesTraffic is what the finishing steps stages ask for together.
func stagesTraffic(stages []rolloutsv1beta1.FinalisingStepType, cs *progress.Progress) Traffic {
	var t Traffic
	for _, s := range stages {
		switch s {
		case rolloutsv1beta1.FinalisingStepRouteTrafficToNew:
			t.Canary, t.CanaryRevision = CanaryEnsure, cs.Common.PodTemplateHash
			t.Routes, t.Weight = RoutesShift, ptrTime[int32](100)
		case rolloutsv1beta1.FinalisingStepRestoreStableService:
			t.Stable = StableRestore
		case rolloutsv1beta1.FinalisingStepRouteTrafficToStable:
			t.Routes = RoutesRestore
		case rolloutsv1beta1.FinalisingStepRemoveCanaryService:
			t.Canary = CanaryRemove
		}
	}
	return t
}

// wanted is Wanted for the status st, whose release is cs (nil: none).
//
// The stable Service is narrowed to a revision the workload does not
// finish on only while the release holds the workload: once the workload
// is handed back to its own controller, that controller finishes the
// rollout and removes every pod of such a revision, and the Service would
// select none. So:
//   - while a BatchRelease is being deleted (by hand, mid-release) and
//     hands the workload back, the Service is left as it is: the
//     BatchRelease's controller gives it back before the hand-back, and
//     narrowing it again meanwhile would undo that;
//   - once the workload is no longer marked in progress for this Rollout
//     (handed back by a deleted BatchRelease, or its restore patch applied
//     by hand), the Service gets its own selector back instead.
//
// Narrowing to the revision the workload finishes on (a rollback) is safe
// at any time: its pods only grow.
func wanted(ro *rolloutsv1beta1.Rollout, st *rolloutsv1beta1.RolloutStatus, cs *progress.Progress, obs Observation) Traffic {
	t := wantedAt(ro, st, cs, obs)
	w := obs.Workload
	if t.Stable != StableNarrow || w == nil || finishesOn(w, t.StableRevision) {
		return t
	}
	switch br := obs.BatchRelease; {
	case br != nil && br.Deleting && !br.SkipHandBack:
		t.Stable, t.StableRevision = StableKeep, ""
	case w.InProgressRollout != ro.Name:
		t.Stable, t.StableRevision = StableRestore, ""
	}
	return t
}

// finishesOn reports whether w's own controller, handed it back, finishes
// its rollout on revision rev (a pod-template-hash or revision name).
func finishesOn(w *workload.Status, rev string) bool {
	return w != nil && rev != "" && (w.UpdateRevision == rev || w.PodTemplateHash == rev)
}

// wantedAt is what the release's point asks the traffic to carry.
func wantedAt(ro *rolloutsv1beta1.Rollout, st *rolloutsv1beta1.RolloutStatus, cs *progress.Progress, obs Observation) Traffic {
	if obs.Traffic == nil || cs == nil {
		return Traffic{}
	}
	blueGreen := ro.Spec.Strategy.BlueGreen != nil
	w := obs.Workload
	if obs.Deleting || ro.Spec.Disabled || w == nil || w.Disabled != "" {
		if cs.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted {
			return Traffic{}
		}
		pre, _ := sequence(finishCancel, blueGreen)
		return stagesTraffic(pre, cs)
	}
	if st.Phase == rolloutsv1beta1.RolloutPhaseAborted {
		return abortTraffic(ro, st, obs)
	}
	if st.Phase != rolloutsv1beta1.RolloutPhaseProgressing {
		return Traffic{}
	}
	finishing := func(kind finishKind) Traffic {
		if cs.Common.FinalisingStep == rolloutsv1beta1.FinalisingStepEnd {
			return Traffic{}
		}
		pre, post := sequence(kind, blueGreen)
		if slices.Contains(post, cs.Common.FinalisingStep) {
			return stagesTraffic(post, cs)
		}
		return stagesTraffic(pre, cs)
	}
	switch reasonOf(st) {
	case rolloutsv1beta1.ProgressingReasonFinalising:
		if rollingBack(cs) {
			return finishing(finishRollback)
		}
		return finishing(finishSuccess)
	case rolloutsv1beta1.ProgressingReasonCancelling:
		return finishing(finishRollback)
	case rolloutsv1beta1.ProgressingReasonInRolling, rolloutsv1beta1.ProgressingReasonPaused:
		return stepTraffic(ro, cs, obs)
	}
	return Traffic{}
}

// stepTraffic is what the Services and routes carry during a step.
func stepTraffic(ro *rolloutsv1beta1.Rollout, cs *progress.Progress, obs Observation) Traffic {
	steps := ro.Spec.Strategy.Steps()
	if len(steps) == 0 || cs.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted {
		return Traffic{}
	}
	if rollingBack(cs) {
		// A rollback in batches keeps every request on the rollback
		// target's ready pods from before its first pod is replaced to the
		// end: the routes and the canary Service go (they lead to the
		// revision being rolled back), and the stable Service selects only
		// the target revision, which never leaves it without endpoints
		// since its pods only grow.
		t := Traffic{Stable: StableNarrow, StableRevision: cs.Common.StableRevision, Routes: RoutesRestore, Canary: CanaryRemove}
		if t.StableRevision == "" {
			t.StableRevision = obs.Traffic.StableRevision
		}
		return t
	}
	idx := min(max(cs.Common.CurrentStepIndex, 1), int32(len(steps))) //nolint:gosec // at most 50 steps
	step := steps[idx-1]
	if !trafficStep(step) {
		// Traffic steps, then plain ones: the routing goes first.
		return Traffic{Stable: StableRestore, Routes: RoutesRestore, Canary: CanaryRemove}
	}
	t := Traffic{Stable: StableNarrow, StableRevision: cs.Common.StableRevision}
	if t.StableRevision == "" {
		t.StableRevision = obs.Traffic.StableRevision
	}
	if inPlace(ro) && obs.Workload != nil && step.Replicas != nil {
		if want, err := batch.DesiredUpdated(step.Replicas, obs.Workload.Replicas); err == nil && want >= obs.Workload.Replicas {
			// Every pod is about to run the new revision: a stable Service
			// narrowed to the old one would be left without endpoints.
			t = Traffic{Stable: StableRestore}
		}
	}
	switch cs.Common.CurrentStepState {
	case rolloutsv1beta1.CanaryStepStateTrafficRouting, rolloutsv1beta1.CanaryStepStateMetricsAnalysis,
		rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.CanaryStepStateReady:
		t.Canary, t.CanaryRevision = CanaryEnsure, cs.Common.PodTemplateHash
		t.Routes, t.Matches, t.RequestHeaderModifier = RoutesShift, step.Matches, step.RequestHeaderModifier
		if step.Traffic != nil {
			if w, ok := weightOf(*step.Traffic); ok {
				t.Weight = &w
			}
		}
	default:
		if idx == 1 {
			// A release that starts (or restarts for a newer revision)
			// first takes any routing of an earlier one back.
			t.Routes, t.Canary = RoutesRestore, CanaryRemove
		}
	}
	return t
}

// rollingBack reports whether the release cs describes is a rollback in
// batches: it releases the revision it replaced.
func rollingBack(cs *progress.Progress) bool {
	return cs.Common.StableRevision != "" && (cs.Revision == cs.Common.StableRevision || cs.Common.PodTemplateHash == cs.Common.StableRevision)
}

// trafficStep reports whether a step shifts traffic.
func trafficStep(s rolloutsv1beta1.CanaryStep) bool {
	return s.Traffic != nil || len(s.Matches) > 0
}

// inPlace reports whether the new revision's pods replace the workload's
// own (multi-batch), rather than running beside them.
func inPlace(ro *rolloutsv1beta1.Rollout) bool {
	s := ro.Spec.Strategy
	return s.BlueGreen == nil && (s.Canary == nil || !s.Canary.EnableExtraWorkloadForCanary)
}

// weightOf is the weight a step's traffic ("20%") asks for, when it is
// one (0 to 100).
func weightOf(s string) (int32, bool) {
	n, ok := rolloutsv1beta1.Percent(s)
	if !ok || n < 0 || n > 100 {
		return 0, false
	}
	return int32(n), true //nolint:gosec // 0..100
}

func reasonOf(st *rolloutsv1beta1.RolloutStatus) string {
	for _, c := range st.Conditions {
		if c.Type == rolloutsv1beta1.RolloutConditionProgressing {
			return c.Reason
		}
	}
	return ""
}

// routing reports whether the Rollout has routes to drive.
func (m *machine) routing() bool { return m.obs.Traffic != nil }

// engaged reports whether a release may have changed traffic that a
// cancellation must give back.
func (m *machine) engaged() bool {
	cs := m.rel
	return m.routing() && cs != nil && cs.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted
}

// routed reports whether the Services and routes carry what the release
// wants at its current point, and the grace period since the last change
// has passed. Until then it asks to be looked at again.
func (m *machine) routed() bool {
	t := m.obs.Traffic
	if t == nil {
		return true
	}
	want := wanted(m.ro, &m.st, m.rel, m.obs)
	if want.Idle() {
		return true
	}
	grace := t.Grace
	switch {
	case !want.Equal(t.Ensured):
		// The release moved on in this call: the controller makes the
		// Services and routes carry want on the next look.
		m.requeue(time.Second)
		return false
	case t.Err != "":
		if c := m.condition(TrafficRoutedCondition); c == nil || c.Status != corev1.ConditionFalse || c.Message != t.Err {
			m.event(corev1.EventTypeWarning, "RoutingFailed", "%s", t.Err)
		}
		m.setCondition(TrafficRoutedCondition, corev1.ConditionFalse, "RoutingFailed", t.Err)
		m.requeue(max(grace, time.Second))
		return false
	case !t.Converged:
		m.setCondition(TrafficRoutedCondition, corev1.ConditionFalse, "Changing", t.Progress)
		m.condition(TrafficRoutedCondition).LastUpdateTime = m.now()
		m.requeue(max(grace, time.Second))
		return false
	}
	if c := m.condition(TrafficRoutedCondition); c != nil && c.Status == corev1.ConditionFalse {
		if left := remaining(m.obs.Now, c.LastUpdateTime.Time, grace); left > 0 {
			m.requeue(left)
			return false
		}
	}
	m.setCondition(TrafficRoutedCondition, corev1.ConditionTrue, "Routed", want.String())
	return true
}

// routingProgress describes what the routing waits for, for messages.
func (m *machine) routingProgress() string {
	t := m.obs.Traffic
	switch {
	case t == nil:
		return ""
	case t.Err != "":
		return t.Err
	case !t.Converged && t.Progress != "":
		return t.Progress
	}
	return "waiting " + t.Grace.String() + " after the last change"
}

// finishTraffic walks the finishing steps stages of a release that ends,
// recording the one in progress in finalisingStep; it reports true once
// they are all done.
func (m *machine) finishTraffic(stages []rolloutsv1beta1.FinalisingStepType) bool {
	if !m.routing() || len(stages) == 0 {
		return true
	}
	cs := m.canary()
	if !slices.Contains(stages, cs.Common.FinalisingStep) {
		cs.Common.FinalisingStep = stages[0]
	}
	if m.routed() {
		return true
	}
	t := m.obs.Traffic
	if slices.Contains(stages, t.Pending) && t.Ensured.Equal(wanted(m.ro, &m.st, m.rel, m.obs)) {
		cs.Common.FinalisingStep = t.Pending
	}
	m.st.Message = fmt.Sprintf("Finishing (%s): %s", cs.Common.FinalisingStep, m.routingProgress())
	return false
}

// requeue asks for another look within d.
func (m *machine) requeue(d time.Duration) {
	if d > 0 && (m.act.RequeueAfter == 0 || d < m.act.RequeueAfter) {
		m.act.RequeueAfter = d
	}
}
