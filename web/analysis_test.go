package web

import (
	"testing"

	"github.com/sluice-dev/sluice/analysis/series"
)

func TestBuildCharts(t *testing.T) {
	got := buildCharts([]series.Series{{Gate: "errors", Step: 1, Metric: "error-rate", Verdict: "Failed", Measured: 3, Successful: 2, Failed: 1,
		Points: []series.Point{
			{Index: 1, Value: "0.01", Number: 0.01, Numeric: true, Outcome: "Successful"},
			{Index: 2, Outcome: "Error", Message: "connection refused"},
			{Index: 3, Value: "0.3", Number: 0.3, Numeric: true, Outcome: "Failed"},
		}}, {Gate: "bg", Metric: "p99"}})
	if len(got) != 2 {
		t.Fatalf("charts %+v", got)
	}
	c := got[0]
	if c.Where != "step 1" || c.Min != "0.01" || c.Max != "0.3" || c.Last != "0.3" || len(c.Marks) != 3 {
		t.Fatalf("chart %+v", c)
	}
	// The lowest number on the baseline, the highest at the top, an Error
	// on the baseline without a point of the line.
	if m := c.Marks; m[0].X != 6 || m[0].Y != 54 || m[2].X != 234 || m[2].Y != 6 || m[1].Y != 54 {
		t.Fatalf("marks %+v", m)
	}
	if c.Line != "6,54 234,6" || c.Marks[1].Title != "2: Error connection refused" {
		t.Fatalf("line %q, title %q", c.Line, c.Marks[1].Title)
	}
	if got[1].Where != "background" || len(got[1].Marks) != 0 || got[1].Line != "" {
		t.Fatalf("empty chart %+v", got[1])
	}
}
