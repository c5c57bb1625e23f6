package web

import (
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/analysis/series"
	"github.com/sluice-dev/sluice/analysis/verdict"
)

// The size of a metric's chart, in SVG user units, and its margin.
const (
	ChartWidth  = 240
	ChartHeight = 60
	chartMargin = 6
)

// Chart is one metric of one analysis run, its measurements drawn as a
// small line chart: one mark per measurement kept, coloured by outcome,
// the numbers joined by a line.
type Chart struct {
	Gate   string `json:"gate"`
	Metric string `json:"metric"`
	// Where is "step 1" or "background".
	Where   string `json:"where"`
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
	// Measured, Successful and Failed count every measurement taken.
	Measured   int32 `json:"measured"`
	Successful int32 `json:"successful"`
	Failed     int32 `json:"failed"`
	// Line is the polyline through the numeric measurements ("x,y x,y").
	Line string `json:"line,omitempty"`
	// Marks are the measurements kept, oldest first.
	Marks []Mark `json:"marks"`
	// Min and Max are the range drawn, Last the latest value.
	Min  string `json:"min,omitempty"`
	Max  string `json:"max,omitempty"`
	Last string `json:"last,omitempty"`
}

// Mark is one measurement on a chart.
type Mark struct {
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Index   int32   `json:"index"`
	Value   string  `json:"value,omitempty"`
	Outcome string  `json:"outcome"`
	// Title says it on hover: "3: 0.004 Successful".
	Title string `json:"title"`
}

// buildCharts draws each series as a chart.
func buildCharts(ss []series.Series) []Chart {
	out := make([]Chart, 0, len(ss))
	for _, s := range ss {
		c := Chart{Gate: s.Gate, Metric: s.Metric, Where: fmt.Sprintf("step %d", s.Step), Verdict: s.Verdict, Message: s.Message,
			Measured: s.Measured, Successful: s.Successful, Failed: s.Failed}
		if s.Step == 0 {
			c.Where = "background"
		}
		lo, hi, numeric := series.Range(s.Points)
		if numeric {
			c.Min, c.Max = num(lo), num(hi)
		}
		n := len(s.Points)
		var line []string
		for i, p := range s.Points {
			x := float64(chartMargin)
			if n > 1 {
				x += float64(i) * float64(ChartWidth-2*chartMargin) / float64(n-1)
			}
			y := float64(ChartHeight - chartMargin) // not a number: on the baseline
			if p.Numeric && hi > lo {
				y -= (p.Number - lo) / (hi - lo) * float64(ChartHeight-2*chartMargin)
			}
			m := Mark{X: round(x), Y: round(y), Index: p.Index, Value: p.Value, Outcome: p.Outcome}
			m.Title = strings.Join(strings.Fields(fmt.Sprintf("%d: %s %s %s", p.Index, p.Value, p.Outcome, p.Message)), " ")
			if p.Numeric {
				line = append(line, num(m.X)+","+num(m.Y))
			}
			c.Marks = append(c.Marks, m)
		}
		c.Line = strings.Join(line, " ")
		if n > 0 {
			c.Last = s.Points[n-1].Value
		}
		out = append(out, c)
	}
	return out
}

func round(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

func num(f float64) string {
	return verdict.Display(f)
}
