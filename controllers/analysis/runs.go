package analysis

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/analysis/stepgate"
	"github.com/sluice-dev/sluice/analysis/verdict"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/progress"
)

// maxRuns bounds the runs kept per Rollout: the newest steps of the
// release (each run keeps historyLimit measurements per metric).
const maxRuns = 10

// release is what the analysis reads of a Rollout's status.
type release struct {
	// Revision is the new pods' revision, RolloutID the release's id,
	// Stable the revision being replaced.
	Revision, RolloutID, Stable string
	// Step and State are the current step and its state.
	Step  int32
	State rolloutsv1beta1.CanaryStepState
	// Active: a release of a new revision is going through its steps (not
	// finishing, not rolling back, not before its first step).
	Active bool
	// Since is when the release was retried after an abort (zero: never):
	// the runs started before belong to the aborted release.
	Since time.Time
}

// releaseOf reads ro's release.
func releaseOf(ro *rolloutsv1beta1.Rollout) release {
	p, ok := progress.Of(ro)
	if !ok {
		return release{}
	}
	r := release{
		Revision: p.NewPodRevision(), RolloutID: p.Common.ObservedRolloutID, Stable: p.Common.StableRevision,
		Step: p.Common.CurrentStepIndex, State: p.Common.CurrentStepState, Since: stepgate.Since(ro),
	}
	rollback := r.Stable != "" && (r.Stable == r.Revision || r.Stable == p.Revision)
	r.Active = progress.InRelease(ro) && !rollback && r.Revision != "" && r.Step >= 1
	return r
}

// settled reports whether a step's pods are ready and its traffic routed:
// the moment its analysis starts.
func settled(s rolloutsv1beta1.CanaryStepState) bool {
	switch s {
	case rolloutsv1beta1.CanaryStepStateMetricsAnalysis, rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.CanaryStepStateReady:
		return true
	}
	return false
}

// backgroundStep is the step number of a background run.
const backgroundStep = 0

// entryFor returns the gate's record of ro's release: the previous one when
// it is of the same release, else a new, empty one.
func entryFor(prev *analysisv1alpha1.RolloutAnalysis, name string, rel release) analysisv1alpha1.RolloutAnalysis {
	if prev != nil && (rel.Revision == "" || (prev.Revision == rel.Revision && prev.RolloutID == rel.RolloutID)) {
		e := *prev.DeepCopy()
		if rel.Stable != "" {
			e.StableRevision = rel.Stable
		}
		// A retried release is analysed anew: the runs of the aborted
		// one (their verdicts, failed ones included) are dropped.
		kept := e.Runs[:0]
		for _, r := range e.Runs {
			if !stepgate.Stale(&r, rel.Since) {
				kept = append(kept, r)
			}
		}
		e.Runs = kept
		return e
	}
	return analysisv1alpha1.RolloutAnalysis{Name: name, Revision: rel.Revision, RolloutID: rel.RolloutID, StableRevision: rel.Stable}
}

// wantedRun is the run the release needs now (its step, or the background
// run), and false when it needs none.
func wantedRun(spec *analysisv1alpha1.MetricGateSpec, rel release) (int32, bool) {
	if !rel.Active {
		return 0, false
	}
	if spec.Run.Background {
		return backgroundStep, rel.Step > 1 || settled(rel.State)
	}
	return rel.Step, spec.RunsAt(rel.Step) && settled(rel.State)
}

// liveRun reports whether e has a run of step that startRun keeps: one
// still running, or one that reached its verdict.
func liveRun(e *analysisv1alpha1.RolloutAnalysis, step int32) bool {
	r := e.RunOf(step)
	return r != nil && (r.FinishedAt == nil || r.Verdict.Done())
}

// startRun makes sure e has a live run of step: a new one, or a fresh one
// in place of a run that was stopped before its verdict (the release came
// back to the step). It returns whether it started one.
func startRun(e *analysisv1alpha1.RolloutAnalysis, step int32, now metav1.Time) bool {
	if liveRun(e, step) {
		return false
	}
	if r := e.RunOf(step); r != nil {
		*r = analysisv1alpha1.AnalysisRun{Step: step, Verdict: analysisv1alpha1.VerdictRunning, StartedAt: now}
		return true
	}
	e.Runs = append(e.Runs, analysisv1alpha1.AnalysisRun{Step: step, Verdict: analysisv1alpha1.VerdictRunning, StartedAt: now})
	if len(e.Runs) > maxRuns {
		e.Runs = append([]analysisv1alpha1.AnalysisRun(nil), e.Runs[len(e.Runs)-maxRuns:]...)
	}
	return true
}

// stopRuns finishes the live runs the release no longer needs: a step run
// once the release left its step, a background run once the release
// ended (its metrics then conclude: passed when within their limits with a
// success). It returns the runs it finished with a final verdict.
func stopRuns(e *analysisv1alpha1.RolloutAnalysis, spec *analysisv1alpha1.MetricGateSpec, rel release, now metav1.Time) []*analysisv1alpha1.AnalysisRun {
	var concluded []*analysisv1alpha1.AnalysisRun
	for i := range e.Runs {
		r := &e.Runs[i]
		if r.FinishedAt != nil {
			continue
		}
		// A step run lives while the release is at its step, even if the
		// step's state moves on (approved, replanned); a background run
		// while the release goes on.
		live := rel.Active && ((r.Step == backgroundStep && spec.Run.Background) ||
			(r.Step != backgroundStep && r.Step == rel.Step && spec.RunsAt(r.Step)))
		if live {
			continue
		}
		r.FinishedAt = &now
		if r.Step == backgroundStep {
			for j := range r.Metrics {
				mr := &r.Metrics[j]
				if m := metricSpec(spec, mr.Name); m != nil {
					mr.Verdict = verdict.Conclude(mr, verdict.LimitsOf(m))
				}
			}
			verdict.Summarise(r)
			r.Message = "release ended: " + r.Message
			concluded = append(concluded, r)
			continue
		}
		why := fmt.Sprintf("the release left step %d", r.Step)
		if !rel.Active {
			why = "the release ended"
		}
		r.Message = fmt.Sprintf("stopped before its verdict (%s): %s", why, r.Message)
	}
	return concluded
}

// syncMetrics lines the run's metrics up with spec.metrics: in their order,
// new ones waiting for their first measurement, removed ones dropped.
func syncMetrics(r *analysisv1alpha1.AnalysisRun, spec *analysisv1alpha1.MetricGateSpec) {
	out := make([]analysisv1alpha1.MetricRun, 0, len(spec.Metrics))
	for i := range spec.Metrics {
		m := &spec.Metrics[i]
		mr := analysisv1alpha1.MetricRun{Name: m.Name, Verdict: analysisv1alpha1.VerdictRunning}
		for j := range r.Metrics {
			if r.Metrics[j].Name == m.Name {
				mr = r.Metrics[j]
			}
		}
		if mr.Message == "" {
			mr.Message = verdict.MetricMessage(&mr, verdict.LimitsOf(m))
		}
		out = append(out, mr)
	}
	r.Metrics = out
}

// dueAt is when metric m's next measurement in run r is due: the run's
// start plus the initial delay for the first, the previous one's time plus
// the interval for the others.
func dueAt(r *analysisv1alpha1.AnalysisRun, m *analysisv1alpha1.Metric, mr *analysisv1alpha1.MetricRun) time.Time {
	if n := len(mr.Measurements); n > 0 && mr.Measured > 0 {
		interval := m.Interval.Duration
		if interval <= 0 {
			interval = time.Minute
		}
		return mr.Measurements[n-1].Time.Add(interval)
	}
	return r.StartedAt.Add(m.InitialDelay.Duration)
}

func metricSpec(spec *analysisv1alpha1.MetricGateSpec, name string) *analysisv1alpha1.Metric {
	for i := range spec.Metrics {
		if spec.Metrics[i].Name == name {
			return &spec.Metrics[i]
		}
	}
	return nil
}
