// Package verdict judges measurements and the metrics and analyses made of
// them, without a client or a clock: given a measurement's condition
// results it gives the measurement's outcome, and given a metric's counts
// and limits the metric's verdict (Running, Passed, Failed, Inconclusive);
// an analysis fails as soon as one of its metrics failed and passes once
// every one passed.
package verdict

import (
	"fmt"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// Check is a condition evaluated on a measurement's result.
type Check struct {
	// Expr is the condition, as written.
	Expr string
	// Held is what it evaluated to.
	Held bool
}

// Judge gives a measurement's outcome from its conditions (nil: not set),
// and a message for a Failed or Inconclusive one. The failure condition
// wins; a success condition that does not hold fails the measurement when
// there is no failure condition, and makes it Inconclusive when there is
// one that does not hold either. With neither condition, the measurement
// is Inconclusive: there is nothing to judge it by.
func Judge(success, failure *Check) (analysisv1alpha1.Outcome, string) {
	switch {
	case failure != nil && failure.Held:
		return analysisv1alpha1.OutcomeFailed, failure.Expr
	case success != nil && success.Held:
		return analysisv1alpha1.OutcomeSuccessful, ""
	case success != nil && failure == nil:
		return analysisv1alpha1.OutcomeFailed, success.Expr + " is false"
	case success != nil:
		return analysisv1alpha1.OutcomeInconclusive, fmt.Sprintf("neither %s nor %s", success.Expr, failure.Expr)
	case failure != nil:
		return analysisv1alpha1.OutcomeSuccessful, ""
	}
	return analysisv1alpha1.OutcomeInconclusive, "no condition to judge by"
}

// Limits are what a metric may measure and tolerate.
type Limits struct {
	// Count is how many measurements to take; 0 is no end.
	Count int32
	// FailureLimit is how many Failed measurements are tolerated.
	FailureLimit int32
	// InconclusiveLimit is how many Inconclusive (and Error) measurements
	// are tolerated.
	InconclusiveLimit int32
}

// LimitsOf returns the limits of m.
func LimitsOf(m *analysisv1alpha1.Metric) Limits {
	return Limits{Count: m.Count, FailureLimit: m.FailureLimit, InconclusiveLimit: m.InconclusiveLimit}
}

// Metric is the verdict of a metric with mr's counts under l: Failed once
// more measurements failed than tolerated, else Inconclusive once more were
// inconclusive than tolerated, else, once all were taken, Passed if at
// least one succeeded (Inconclusive if none did), else Running.
func Metric(mr *analysisv1alpha1.MetricRun, l Limits) analysisv1alpha1.Verdict {
	switch {
	case mr.Failed > l.FailureLimit:
		return analysisv1alpha1.VerdictFailed
	case mr.Inconclusive > l.InconclusiveLimit:
		return analysisv1alpha1.VerdictInconclusive
	case l.Count > 0 && mr.Measured >= l.Count && mr.Successful > 0:
		return analysisv1alpha1.VerdictPassed
	case l.Count > 0 && mr.Measured >= l.Count:
		return analysisv1alpha1.VerdictInconclusive
	}
	return analysisv1alpha1.VerdictRunning
}

// Conclude is the verdict of a metric whose run ends before it finished (a
// background analysis when the release ends): within its limits, it passed
// if at least one measurement succeeded and is inconclusive otherwise.
func Conclude(mr *analysisv1alpha1.MetricRun, l Limits) analysisv1alpha1.Verdict {
	if v := Metric(mr, l); v.Done() {
		return v
	}
	if mr.Successful > 0 {
		return analysisv1alpha1.VerdictPassed
	}
	return analysisv1alpha1.VerdictInconclusive
}

// Analysis is the verdict of a run made of metrics: Failed if one failed,
// else Inconclusive if one is, else Passed if every one passed, else
// Running. A run without metrics is Running: it has proved nothing.
func Analysis(metrics []analysisv1alpha1.MetricRun) analysisv1alpha1.Verdict {
	v := analysisv1alpha1.VerdictRunning
	passed := 0
	for i := range metrics {
		switch metrics[i].Verdict {
		case analysisv1alpha1.VerdictFailed:
			return analysisv1alpha1.VerdictFailed
		case analysisv1alpha1.VerdictInconclusive:
			v = analysisv1alpha1.VerdictInconclusive
		case analysisv1alpha1.VerdictPassed:
			passed++
		}
	}
	if v == analysisv1alpha1.VerdictRunning && len(metrics) > 0 && passed == len(metrics) {
		return analysisv1alpha1.VerdictPassed
	}
	return v
}

// Record adds m, the measurement numbered mr.Measured+1, to mr: it counts
// it, keeps the last history measurements, and sets the verdict and message
// under l. A measurement with any other index is refused (false): one
// already recorded is never counted twice.
func Record(mr *analysisv1alpha1.MetricRun, m analysisv1alpha1.Measurement, l Limits, history int) bool {
	if m.Index != mr.Measured+1 || mr.Verdict.Done() {
		return false
	}
	mr.Measured++
	switch m.Outcome {
	case analysisv1alpha1.OutcomeSuccessful:
		mr.Successful++
	case analysisv1alpha1.OutcomeFailed:
		mr.Failed++
	default:
		mr.Inconclusive++
	}
	mr.Measurements = append(mr.Measurements, m)
	if history < 1 {
		history = 1
	}
	if n := len(mr.Measurements); n > history {
		mr.Measurements = append([]analysisv1alpha1.Measurement(nil), mr.Measurements[n-history:]...)
	}
	mr.Verdict = Metric(mr, l)
	mr.Message = MetricMessage(mr, l)
	return true
}

// Summarise sets a run's verdict and message from its metrics.
func Summarise(run *analysisv1alpha1.AnalysisRun) {
	run.Verdict = Analysis(run.Metrics)
	run.Message = RunMessage(run)
}
