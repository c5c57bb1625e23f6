package view

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/sluice-dev/sluice/analysis/series"
)

// maxValues is how many of a series' last values the page writes beside
// its chart.
const maxValues = 3

// writeAnalysis writes the measurements of the release's analyses, one
// line per metric with a small chart of the values kept:
//
//	Analysis:
//	  errors  step 1  error-rate  Failed  ▁▁▂█  0.01 0.02 0.3  error-rate 0.3: result < 0.05 is false
func writeAnalysis(b *strings.Builder, s Snapshot) {
	if len(s.Analysis) == 0 {
		return
	}
	fmt.Fprintf(b, "\nAnalysis:\n")
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, se := range s.Analysis {
		where := fmt.Sprintf("step %d", se.Step)
		if se.Step == 0 {
			where = "background"
		}
		chart := series.Sparkline(se.Points)
		if chart == "" {
			chart = "-"
		}
		var values []string
		for _, p := range se.Points[max(len(se.Points)-maxValues, 0):] {
			v := p.Value
			if v == "" {
				v = strings.ToLower(p.Outcome)
			}
			values = append(values, v)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", se.Gate, where, se.Metric, orNone(se.Verdict), chart,
			orNone(strings.Join(values, " ")), se.Message)
	}
	_ = tw.Flush()
}
