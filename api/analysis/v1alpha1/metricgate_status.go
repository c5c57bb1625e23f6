package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verdict is where a metric, or an analysis of several, stands.
type Verdict string

// The verdicts of a metric and of an analysis.
const (
	// VerdictRunning: measurements are still being taken.
	VerdictRunning Verdict = "Running"
	// VerdictPassed: every measurement was taken within the limits.
	VerdictPassed Verdict = "Passed"
	// VerdictFailed: more measurements failed than failureLimit allows.
	VerdictFailed Verdict = "Failed"
	// VerdictInconclusive: more measurements were inconclusive than
	// inconclusiveLimit allows, or none succeeded.
	VerdictInconclusive Verdict = "Inconclusive"
)

// Done reports whether v is final: Passed, Failed or Inconclusive.
func (v Verdict) Done() bool { return v != VerdictRunning && v != "" }

// Outcome is how one measurement was judged.
type Outcome string

// The outcomes of a measurement.
const (
	// OutcomeSuccessful: the success condition held (or the failure
	// condition did not).
	OutcomeSuccessful Outcome = "Successful"
	// OutcomeFailed: the failure condition held (or the success condition
	// did not).
	OutcomeFailed Outcome = "Failed"
	// OutcomeInconclusive: neither condition held.
	OutcomeInconclusive Outcome = "Inconclusive"
	// OutcomeError: the measurement could not be taken or judged; it
	// counts against inconclusiveLimit.
	OutcomeError Outcome = "Error"
)

// MetricGateStatus reports what a MetricGate measured and concluded.
type MetricGateStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling and Stalled, as Flux's controllers
	// report them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// BoundRollouts is how many Rollouts the selector picks.
	// +optional
	BoundRollouts int32 `json:"boundRollouts,omitempty"`
	// Rollouts holds, for each bound Rollout, the runs of its current
	// release: what its steps wait for.
	// +kubebuilder:validation:MaxItems=200
	// +listType=map
	// +listMapKey=name
	// +optional
	Rollouts []RolloutAnalysis `json:"rollouts,omitempty"`
	// ReconcileRequestStatus records the last reconcile.fluxcd.io/requestedAt
	// handled.
	meta.ReconcileRequestStatus `json:",inline"`
}

// RolloutAnalysis is the analysis of one bound Rollout's release.
type RolloutAnalysis struct {
	// Name of the Rollout.
	Name string `json:"name"`
	// Revision is the revision being released, as its pods are labelled
	// (the Rollout's podTemplateHash, else its canaryRevision): runs belong
	// to it, and a new revision starts new runs.
	Revision string `json:"revision"`
	// RolloutID is the release's rollout-id (status.canaryStatus.observedRolloutID):
	// a new id for the same revision also starts new runs.
	// +optional
	RolloutID string `json:"rolloutID,omitempty"`
	// StableRevision is the revision being replaced.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`
	// Runs are the analyses of the release: one per step of spec.run.steps
	// the release reached, or one background run (step 0).
	// +kubebuilder:validation:MaxItems=51
	// +listType=map
	// +listMapKey=step
	// +optional
	Runs []AnalysisRun `json:"runs,omitempty"`
}

// AnalysisRun is the analysis of one step of a release (or of the whole
// release, in the background): the verdict the step waits for.
type AnalysisRun struct {
	// Step analysed, from 1; 0 for a background run.
	Step int32 `json:"step"`
	// Verdict of the run: Failed as soon as a metric failed, Inconclusive as
	// soon as one is (and none failed), Passed once every metric passed,
	// else Running.
	Verdict Verdict `json:"verdict"`
	// Message says it for people, e.g. "error-rate 0.004 (3/5 passed)" or
	// "error-rate 0.12: result < 0.05 is false (1 failed, failureLimit 0)".
	// +optional
	Message string `json:"message,omitempty"`
	// StartedAt is when the run started: initial delays and intervals count
	// from it.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when the verdict became final, or when the release left
	// the step (or ended) before it did; no measurement is taken after it.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Metrics are the metrics of the run, in the order of spec.metrics.
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +optional
	Metrics []MetricRun `json:"metrics,omitempty"`
}

// MetricRun is one metric of a run: its counts, verdict and last
// measurements.
type MetricRun struct {
	// Name of the metric.
	Name string `json:"name"`
	// Verdict of the metric.
	Verdict Verdict `json:"verdict"`
	// Measured counts every measurement taken, Successful, Failed and
	// Inconclusive (including Error) those judged so.
	// +optional
	Measured int32 `json:"measured,omitempty"`
	// Successful counts the Successful measurements.
	// +optional
	Successful int32 `json:"successful,omitempty"`
	// Failed counts the Failed measurements.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Inconclusive counts the Inconclusive and Error measurements.
	// +optional
	Inconclusive int32 `json:"inconclusive,omitempty"`
	// Message says the verdict for people.
	// +optional
	Message string `json:"message,omitempty"`
	// Measurements are the last spec.historyLimit measurements, oldest
	// first.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Measurements []Measurement `json:"measurements,omitempty"`
}

// Measurement is one measurement of a metric.
type Measurement struct {
	// Index numbers the measurement within its run, from 1: a measurement is
	// recorded once per index, so a restart neither loses nor repeats one.
	Index int32 `json:"index"`
	// Time is when the measurement was taken, to the microsecond (the next
	// one is due an interval later).
	Time metav1.MicroTime `json:"time"`
	// Value is the result as measured (for a Job, true or false), shortened
	// to 256 characters.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Value string `json:"value,omitempty"`
	// Outcome is how the measurement was judged.
	Outcome Outcome `json:"outcome"`
	// Message says why, for Error and Inconclusive outcomes.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// GetConditions returns the conditions.
func (g *MetricGate) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions sets the conditions.
func (g *MetricGate) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// RolloutAnalysisOf returns the analysis of the Rollout named name, or nil.
func (s *MetricGateStatus) RolloutAnalysisOf(name string) *RolloutAnalysis {
	for i := range s.Rollouts {
		if s.Rollouts[i].Name == name {
			return &s.Rollouts[i]
		}
	}
	return nil
}

// RunOf returns the run of step, or nil.
func (a *RolloutAnalysis) RunOf(step int32) *AnalysisRun {
	for i := range a.Runs {
		if a.Runs[i].Step == step {
			return &a.Runs[i]
		}
	}
	return nil
}
