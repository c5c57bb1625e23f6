// Package series reads the measurements the MetricGates bound to a Rollout
// kept of its current release, one series per gate, run and metric, for
// people to see: the small charts of `kubectl sluice status` and of the
// web view. It is pure: no client, no clock.
package series

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
)

// Point is one measurement.
type Point struct {
	// Index numbers it within its run, from 1.
	Index int32 `json:"index"`
	// Time is when it was taken.
	Time time.Time `json:"time"`
	// Value is the value as kept, Number its numeric reading (Numeric
	// false for a value that is not a number: a list, a string, none).
	Value   string  `json:"value,omitempty"`
	Number  float64 `json:"number"`
	Numeric bool    `json:"numeric"`
	// Outcome is how it was judged: Successful, Failed, Inconclusive,
	// Error.
	Outcome string `json:"outcome"`
	// Message says why, for a measurement that did not succeed.
	Message string `json:"message,omitempty"`
}

// Series is one metric of one run of a gate.
type Series struct {
	// Gate names the MetricGate, Step the step analysed (0: background).
	Gate string `json:"gate"`
	Step int32  `json:"step"`
	// Metric names the metric.
	Metric string `json:"metric"`
	// Verdict is the metric's verdict, Message says it.
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
	// Measured, Successful and Failed count every measurement taken; the
	// points are the last ones kept.
	Measured   int32 `json:"measured"`
	Successful int32 `json:"successful"`
	Failed     int32 `json:"failed"`
	// Points are the measurements kept, oldest first.
	Points []Point `json:"points"`
}

// Of returns the series of ro's current release that gates kept: every
// run of every gate bound to ro (background runs first, then by step), in
// the order of the gates' names and their metrics.
func Of(gates []analysisv1alpha1.MetricGate, ro *rolloutsv1beta1.Rollout) []Series {
	p, ok := progress.Of(ro)
	if !ok {
		return nil
	}
	sorted := append([]analysisv1alpha1.MetricGate(nil), gates...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var out []Series
	for i := range sorted {
		g := &sorted[i]
		sel, err := metav1.LabelSelectorAsSelector(&g.Spec.RolloutSelector)
		if g.Namespace != ro.Namespace || err != nil || !sel.Matches(labels.Set(ro.Labels)) {
			continue
		}
		ra := g.Status.RolloutAnalysisOf(ro.Name)
		if ra == nil || ra.Revision != p.NewPodRevision() || ra.RolloutID != p.Common.ObservedRolloutID {
			continue
		}
		runs := append([]analysisv1alpha1.AnalysisRun(nil), ra.Runs...)
		sort.SliceStable(runs, func(a, b int) bool { return runs[a].Step < runs[b].Step })
		for _, run := range runs {
			for _, m := range run.Metrics {
				s := Series{Gate: g.Name, Step: run.Step, Metric: m.Name, Verdict: string(m.Verdict), Message: m.Message,
					Measured: m.Measured, Successful: m.Successful, Failed: m.Failed}
				for _, ms := range m.Measurements {
					pt := Point{Index: ms.Index, Time: ms.Time.Time, Value: ms.Value, Outcome: string(ms.Outcome)}
					if ms.Outcome != analysisv1alpha1.OutcomeSuccessful {
						pt.Message = ms.Message
					}
					if f, err := strconv.ParseFloat(strings.TrimSpace(ms.Value), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
						pt.Number, pt.Numeric = f, true
					}
					s.Points = append(s.Points, pt)
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// Range returns the lowest and highest numbers of the points, and false
// when none is numeric. A range of one value is widened to include 0, so
// that a flat series is drawn at its height.
func Range(points []Point) (lo, hi float64, ok bool) {
	for _, p := range points {
		if !p.Numeric {
			continue
		}
		if !ok {
			lo, hi, ok = p.Number, p.Number, true
			continue
		}
		lo, hi = math.Min(lo, p.Number), math.Max(hi, p.Number)
	}
	if ok && lo == hi {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	return lo, hi, ok
}

// sparks are the bars of a sparkline, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the points as a line of bars, one per measurement,
// scaled from the lowest to the highest number; a measurement that is not
// a number is drawn "·", an Error "×".
func Sparkline(points []Point) string {
	lo, hi, _ := Range(points)
	var b strings.Builder
	for _, p := range points {
		switch {
		case p.Outcome == string(analysisv1alpha1.OutcomeError):
			b.WriteRune('×')
		case !p.Numeric:
			b.WriteRune('·')
		case hi == lo:
			b.WriteRune(sparks[0])
		default:
			i := int(math.Round((p.Number - lo) / (hi - lo) * float64(len(sparks)-1)))
			b.WriteRune(sparks[min(max(i, 0), len(sparks)-1)])
		}
	}
	return b.String()
}
