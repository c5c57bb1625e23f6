package verdict

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// MaxValue is the longest value a measurement keeps, in bytes.
const MaxValue = 256

// MaxMessage is the longest message a measurement keeps, in bytes.
const MaxMessage = 512

// Display writes a measured value for people: numbers with at most four
// significant digits (0.004, 12.35, 1e+06), strings as they are, anything
// else as JSON; at most MaxValue bytes.
func Display(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "null"
	case float64:
		s = formatFloat(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	case bool:
		s = strconv.FormatBool(x)
	case string:
		s = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	return Truncate(s, MaxValue)
}

func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// Truncate shortens s to at most n bytes, on a rune boundary, marking the
// cut with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// MetricMessage says a metric's verdict under l for people:
//
//	error-rate 0.004 (3/5 passed)
//	error-rate 0.12: result < 0.05 is false
//	error-rate 0.12: result >= 0.05 (3 failed, failureLimit 2)
//	latency: Prometheus unreachable (2 inconclusive, inconclusiveLimit 1)
//	latency: no measurement succeeded (5 measured)
func MetricMessage(mr *analysisv1alpha1.MetricRun, l Limits) string {
	last := lastOf(mr.Measurements, "")
	if last == nil {
		return mr.Name + ": waiting for the first measurement"
	}
	switch mr.Verdict {
	case analysisv1alpha1.VerdictFailed:
		m := lastOf(mr.Measurements, analysisv1alpha1.OutcomeFailed)
		s := withValue(mr.Name, m) + ": " + m.Message
		if l.FailureLimit > 0 {
			s += fmt.Sprintf(" (%d failed, failureLimit %d)", mr.Failed, l.FailureLimit)
		}
		return s
	case analysisv1alpha1.VerdictInconclusive:
		if mr.Inconclusive <= l.InconclusiveLimit {
			return fmt.Sprintf("%s: no measurement succeeded (%d measured)", mr.Name, mr.Measured)
		}
		m := lastInconclusive(mr.Measurements)
		return fmt.Sprintf("%s: %s (%d inconclusive, inconclusiveLimit %d)", withValue(mr.Name, m), m.Message, mr.Inconclusive, l.InconclusiveLimit)
	}
	s := withValue(mr.Name, last)
	if last.Outcome == analysisv1alpha1.OutcomeError {
		s = mr.Name + ": " + last.Message
	}
	if l.Count > 0 {
		return fmt.Sprintf("%s (%d/%d passed)", s, mr.Successful, l.Count)
	}
	return fmt.Sprintf("%s (%d passed)", s, mr.Successful)
}

// RunMessage says a run's verdict for people: the messages of its failed
// metrics when it failed, of its inconclusive ones when it is
// inconclusive, else of all its metrics.
func RunMessage(run *analysisv1alpha1.AnalysisRun) string {
	var pick []string
	for i := range run.Metrics {
		m := &run.Metrics[i]
		if run.Verdict == analysisv1alpha1.VerdictFailed || run.Verdict == analysisv1alpha1.VerdictInconclusive {
			if m.Verdict != run.Verdict {
				continue
			}
		}
		pick = append(pick, m.Message)
	}
	sep := ", "
	if run.Verdict == analysisv1alpha1.VerdictFailed || run.Verdict == analysisv1alpha1.VerdictInconclusive {
		sep = "; "
	}
	return strings.Join(pick, sep)
}

func withValue(name string, m *analysisv1alpha1.Measurement) string {
	if m == nil || m.Outcome == analysisv1alpha1.OutcomeError || m.Value == "" {
		return name
	}
	return name + " " + m.Value
}

// lastOf is the newest measurement with the outcome (any when empty).
func lastOf(ms []analysisv1alpha1.Measurement, o analysisv1alpha1.Outcome) *analysisv1alpha1.Measurement {
	for i := len(ms) - 1; i >= 0; i-- {
		if o == "" || ms[i].Outcome == o {
			return &ms[i]
		}
	}
	if len(ms) > 0 {
		return &ms[len(ms)-1]
	}
	return nil
}

func lastInconclusive(ms []analysisv1alpha1.Measurement) *analysisv1alpha1.Measurement {
	for i := len(ms) - 1; i >= 0; i-- {
		if o := ms[i].Outcome; o == analysisv1alpha1.OutcomeInconclusive || o == analysisv1alpha1.OutcomeError {
			return &ms[i]
		}
	}
	return lastOf(ms, "")
}
