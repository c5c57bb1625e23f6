package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetricGate binds the Rollouts its selector picks to metrics measured while
// they release: during the steps it lists (each step a run of its own) or in
// the background for the whole release. Each metric is measured count times,
// every interval, and each measurement judged by the metric's CEL
// conditions; the status keeps the last measurements and, for each bound
// Rollout, the verdict of every run (Running, Passed, Failed, Inconclusive),
// which the Rollout's step waits for (spec.advance) and acts on
// (spec.onFailure).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mg
// +kubebuilder:printcolumn:name="BACKGROUND",type="boolean",JSONPath=".spec.run.background",description="Whether the metrics run for the whole release rather than at given steps.",priority=1
// +kubebuilder:printcolumn:name="ON FAILURE",type="string",JSONPath=".spec.onFailure",description="What a failed analysis does."
// +kubebuilder:printcolumn:name="ROLLOUTS",type="integer",JSONPath=".status.boundRollouts",description="How many Rollouts are bound."
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the last reconciliation succeeded."
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message",description="What the last reconciliation found."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type MetricGate struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what is measured, when, and what a verdict does.
	// +required
	Spec MetricGateSpec `json:"spec"`
	// Status reports the measurements and verdicts of each bound Rollout.
	// +optional
	Status MetricGateStatus `json:"status,omitempty"`
}

// MetricGateList is a list of MetricGates.
//
// +kubebuilder:object:root=true
type MetricGateList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the MetricGates.
	Items []MetricGate `json:"items"`
}

// MetricGateSpec says what a MetricGate measures, when, and what its verdict
// does to a release.
//
// +kubebuilder:validation:XValidation:rule="!has(self.run.background) || !self.run.background || !has(self.advance)",message="spec.advance applies to step analyses: a background analysis holds no step (remove spec.advance, or list spec.run.steps)"
// +kubebuilder:validation:XValidation:rule="(has(self.run.background) && self.run.background) || self.metrics.all(m, m.count > 0)",message="spec.metrics[].count 0 (measure until the release ends) needs spec.run.background: a step analysis must be able to finish"
type MetricGateSpec struct {
	// RolloutSelector picks the Rollouts of the MetricGate's namespace that
	// it binds. An empty selector binds every Rollout of the namespace.
	// +required
	RolloutSelector metav1.LabelSelector `json:"rolloutSelector"`
	// Metrics are measured together; the analysis passes when every metric
	// passed and fails as soon as one failed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +required
	Metrics []Metric `json:"metrics"`
	// Run says when the metrics are measured.
	// +required
	Run RunPolicy `json:"run"`
	// Advance says what a step listed in run.steps needs before it goes on
	// to the next step: Analysis (the analysis passed; a pause without a
	// duration no longer waits for an approval, a timed pause waits for its
	// duration and the analysis), AnalysisAndApproval (the analysis passed
	// and the step was approved), or Approval (the step's own pause rules
	// alone; the analysis only fails it). Default Analysis.
	// +kubebuilder:validation:Enum=Analysis;AnalysisAndApproval;Approval
	// +optional
	Advance AdvancePolicy `json:"advance,omitempty"`
	// OnFailure says what a failed analysis does: Abort (the release is
	// aborted at once: every pod and all traffic back on the stable
	// revision, the pod template left as it is) or Report (the failure is
	// reported in the status, events and notifications; the release goes
	// on as its steps say).
	// +kubebuilder:validation:Enum=Abort;Report
	// +kubebuilder:default=Abort
	// +optional
	OnFailure FailureAction `json:"onFailure,omitempty"`
	// HistoryLimit is how many measurements the status keeps per metric and
	// run, newest last (the counts cover them all).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:default=10
	// +optional
	HistoryLimit int32 `json:"historyLimit,omitempty"`
	// Suspend stops measuring: runs in progress keep their verdict so far
	// and take no new measurement until it is set back to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// RunPolicy says when a MetricGate's metrics are measured: during given
// steps, or in the background.
//
// +kubebuilder:validation:XValidation:rule="(has(self.steps) && size(self.steps) > 0) != (has(self.background) && self.background)",message="spec.run: set exactly one of steps (a list of step indexes) and background: true"
type RunPolicy struct {
	// Steps lists the steps, counted from 1 as status.canaryStatus.currentStepIndex
	// counts them, during which the metrics are measured. Each step gets a
	// run of its own, started once the step's pods are ready and its
	// traffic is routed, and stopped when the release leaves the step.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=50
	// +listType=set
	// +optional
	Steps []int32 `json:"steps,omitempty"`
	// Background measures the metrics once for the whole release: from the
	// moment the first step's pods are ready until the release ends. A
	// background analysis holds no step; its failure acts as OnFailure says.
	// +optional
	Background bool `json:"background,omitempty"`
}

// AdvancePolicy says what a step with analysis needs to go on.
type AdvancePolicy string

// The advance policies.
const (
	// AdvanceOnAnalysis: the step goes on once its analysis passed.
	AdvanceOnAnalysis AdvancePolicy = "Analysis"
	// AdvanceOnAnalysisAndApproval: the analysis passed and the step was
	// approved, in either order.
	AdvanceOnAnalysisAndApproval AdvancePolicy = "AnalysisAndApproval"
	// AdvanceOnApproval: the step's pause rules alone; the analysis can
	// only fail it.
	AdvanceOnApproval AdvancePolicy = "Approval"
)

// FailureAction says what a failed analysis does.
type FailureAction string

// The failure actions.
const (
	// FailureAbort aborts the release: pods and traffic back on stable.
	FailureAbort FailureAction = "Abort"
	// FailureReport only reports the failure.
	FailureReport FailureAction = "Report"
)

// Metric is one measurement, taken count times every interval, and the
// conditions that judge each result.
type Metric struct {
	// Name of the metric, as messages show it ("error-rate").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +required
	Name string `json:"name"`
	// Provider takes the measurement.
	// +required
	Provider MetricProvider `json:"provider"`
	// Interval is the time between two measurements, counted from the
	// moment the previous one was taken.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// InitialDelay is how long the run waits, once started, before the
	// first measurement (time for the new pods to take traffic).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	InitialDelay metav1.Duration `json:"initialDelay,omitempty"`
	// Count is how many measurements the metric takes; it passes when all
	// are taken within the limits and at least one succeeded. 0 measures
	// until the release ends (background analyses only).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Count int32 `json:"count"`
	// SuccessCondition is a CEL expression over result (the measured value:
	// a number, a string, a bool, a list or a map) that is true when the
	// measurement is good, e.g. "result < 0.05". A measurement for which
	// it is false is Failed unless FailureCondition is set, in which case
	// it is Inconclusive.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	SuccessCondition string `json:"successCondition,omitempty"`
	// FailureCondition is a CEL expression over result that is true when
	// the measurement is bad, e.g. "result >= 0.05". It wins over
	// SuccessCondition; without SuccessCondition, a measurement for which
	// it is false is Successful.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	FailureCondition string `json:"failureCondition,omitempty"`
	// FailureLimit is how many Failed measurements the metric tolerates:
	// one more fails it (and the analysis) at once.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	FailureLimit int32 `json:"failureLimit"`
	// InconclusiveLimit is how many Inconclusive measurements (a condition
	// neither succeeded nor failed, or the measurement could not be taken:
	// Error) the metric tolerates: one more makes it Inconclusive, which
	// holds the step until someone decides.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	InconclusiveLimit int32 `json:"inconclusiveLimit"`
}

// MetricProvider takes a measurement: exactly one of its fields is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.prometheus), has(self.web), has(self.job)].filter(x, x).size() == 1",message="spec.metrics[].provider: set exactly one of prometheus, web and job"
type MetricProvider struct {
	// Prometheus runs an instant PromQL query.
	// +optional
	Prometheus *PrometheusMetric `json:"prometheus,omitempty"`
	// Web calls an HTTP endpoint and reads a value from its JSON answer.
	// +optional
	Web *WebMetric `json:"web,omitempty"`
	// Job runs a Kubernetes Job in the Rollout's namespace: its success or
	// failure is the measurement.
	// +optional
	Job *JobMetric `json:"job,omitempty"`
}
