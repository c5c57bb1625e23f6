package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/analysis/series"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The status page draws each metric's measurements as a small chart, with
// its last values, its verdict and what it says.
func TestStatus_analysisChartPerMetric(t *testing.T) {
	pts := []series.Point{
		{Index: 1, Value: "0.01", Number: 0.01, Numeric: true, Outcome: "Successful"},
		{Index: 2, Value: "0.02", Number: 0.02, Numeric: true, Outcome: "Successful"},
		{Index: 3, Outcome: "Error", Message: "connection refused"},
		{Index: 4, Value: "0.3", Number: 0.3, Numeric: true, Outcome: "Failed"},
	}
	s := Snapshot{Rollout: releasing(1, rolloutsv1beta1.CanaryStepStatePaused), Now: now, Analysis: []series.Series{
		{Gate: "errors", Step: 1, Metric: "error-rate", Verdict: "Failed", Message: "error-rate 0.3: result < 0.05 is false", Points: pts},
		{Gate: "latency", Metric: "p99", Verdict: "Running"},
	}}
	var b bytes.Buffer
	if err := Status(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"\nAnalysis:\n",
		"errors   step 1      error-rate  Failed   ▁▁×█  0.02 error 0.3  error-rate 0.3: result < 0.05 is false",
		"latency  background  p99         Running  -     -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status page does not say %q:\n%s", want, out)
		}
	}
}
