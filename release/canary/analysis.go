package canary

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
)

// The MetricGates bound to a Rollout gate its steps (docs/analysis.md):
// the controller reads what they say about the current step
// (analysis/stepgate) into Observation.Analysis, and the machine holds a
// step whose analysis has not passed, lets a paused step go on once it has,
// and aborts the release at once when an analysis whose onFailure is Abort
// fails.

// RolloutConditionAnalysis is sluice's own condition on a Rollout: what
// the MetricGates say about the current step. True once every analysis of
// the step passed, False once one failed, Unknown while one runs or is
// inconclusive; its message is the short text a commit status shows,
// e.g. "analysis 3/5 passed (error-rate 0.004)". It is about the current
// step only: removed when a release starts, when it enters a step, and at
// a step no gate has a say on.
const RolloutConditionAnalysis rolloutsv1beta1.RolloutConditionType = "Analysis"

// The reasons of the Analysis condition.
const (
	AnalysisReasonRunning      = "Running"
	AnalysisReasonPassed       = "Passed"
	AnalysisReasonFailed       = "Failed"
	AnalysisReasonInconclusive = "Inconclusive"
)

// The ways an abort reaches the machine besides a person's request, as
// recorded in status.aborted.via.
const (
	// ViaAnalysis: a MetricGate whose onFailure is Abort failed; by names
	// the gate, the reason its failed metric and value.
	ViaAnalysis = "analysis"
	// ViaProgressDeadline: a step's pods were not ready within the
	// progress deadline of a Rollout whose sluice.dev/on-progress-deadline
	// is abort.
	ViaProgressDeadline = "progress-deadline"
)

// analysisAbort returns the abort a failed analysis of the release asks
// for, or nil.
func (m *machine) analysisAbort() *abort.Request {
	a, cs := m.obs.Analysis, m.canary()
	if a == nil || a.Revision != cs.Revision || rollingBack(cs) {
		return nil
	}
	say, ok := a.AbortBy()
	if !ok {
		return nil
	}
	return &abort.Request{Revision: cs.Revision, By: "MetricGate " + say.Gate, Via: ViaAnalysis, Reason: say.Failure}
}

// analysisAt returns what the analyses say about step idx of the release:
// nil when no gate analyses it (or the release rolls back, which is never
// analysed); a hold when the decision read is about another step or
// release (the step was entered in this very call): its analysis has not
// started yet.
func (m *machine) analysisAt(idx int32) *stepgate.Decision {
	a, cs := m.obs.Analysis, m.canary()
	if a == nil || !a.Analyses(idx) || rollingBack(cs) {
		return nil
	}
	if a.Step != idx || a.Revision != cs.Revision {
		return &stepgate.Decision{Revision: cs.Revision, Step: idx, Steps: a.Steps, Hold: true,
			Message: "analysis not started yet", Short: "analysis not started yet"}
	}
	return a
}

// reportAnalysis sets the Analysis condition from what the analyses say
// about step idx (the step's gates and the background ones), or removes it
// when none has a say.
func (m *machine) reportAnalysis(idx int32) {
	d := m.analysisAt(idx)
	if a := m.obs.Analysis; d == nil && a != nil && a.Step == idx && a.Revision == m.canary().Revision && a.Analysed() && !rollingBack(m.canary()) {
		d = a // background gates only
	}
	if d == nil {
		m.removeCondition(RolloutConditionAnalysis)
		return
	}
	status, reason := analysisState(d)
	m.setCondition(RolloutConditionAnalysis, status, reason, d.Short)
}

// analysisState is the Analysis condition's status and reason for d.
func analysisState(d *stepgate.Decision) (corev1.ConditionStatus, string) {
	if len(d.Failures) > 0 {
		return corev1.ConditionFalse, AnalysisReasonFailed
	}
	if d.Hold {
		return corev1.ConditionUnknown, AnalysisReasonRunning
	}
	inconclusive := false
	for _, s := range d.Gates {
		switch s.Verdict {
		case analysisv1alpha1.VerdictPassed:
		case analysisv1alpha1.VerdictInconclusive:
			inconclusive = true
		default:
			return corev1.ConditionUnknown, AnalysisReasonRunning
		}
	}
	if inconclusive {
		return corev1.ConditionUnknown, AnalysisReasonInconclusive
	}
	return corev1.ConditionTrue, AnalysisReasonPassed
}

// approvalFor returns the approval that covers step idx of the release,
// or nil.
func (m *machine) approvalFor(idx int32) *approval.Approval {
	a := m.obs.Approval
	if a == nil || !a.Covers(m.canary().Revision, idx) || m.beforeRetry(a.At) {
		return nil
	}
	g := *a
	g.Step = idx
	if g.Via == "" {
		g.Via = "annotation"
	}
	return &g
}
