// Package stepgate is the read the Rollout's step machine makes of the
// MetricGates bound to it: given the gates (as the cache holds them) and the
// Rollout, what the analyses say about the current step of its release:
// hold it, let it go on, ask for an approval as well, or abort the release.
// It is pure: no client, no clock.
//
// The gates publish, for each bound Rollout, the runs of its release
// (status.rollouts[name].runs[step]) under the release's revision and
// rollout-id; a run of another release, or no run yet, is an analysis not
// started, which holds the step like a running one.
package stepgate

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/progress"
)

// Say is one gate's say on the step.
type Say struct {
	// Gate is the MetricGate's name.
	Gate string
	// Background is true for a gate that runs for the whole release.
	Background bool
	// Advance and OnFailure are the gate's policies.
	Advance   analysisv1alpha1.AdvancePolicy
	OnFailure analysisv1alpha1.FailureAction
	// Verdict of the gate's run; empty when it has not started.
	Verdict analysisv1alpha1.Verdict
	// Message says it, e.g. "analysis 3/5 passed (error-rate 0.004 (3/5 passed))".
	Message string
	// Short says it in few words, for a commit status: "analysis 3/5
	// passed (error-rate 0.004)", or the failure "error-rate 0.12: result
	// < 0.05 is false".
	Short string
	// Failure is the failed run's message, naming the metric and its
	// value; empty unless the verdict is Failed.
	Failure string
}

// Decision is what the analyses say about the current step.
type Decision struct {
	// Revision is the revision being released (the Rollout's
	// canaryRevision) and Step the step the decision is about: the
	// Rollout's current step when it was read.
	Revision string
	Step     int32
	// Steps lists the steps that the bound gates analyse (not the
	// background ones), in order: a release entering one of them holds
	// until a decision about it is read.
	Steps []int32
	// Gates are the gates that have a say, by name: those analysing the
	// step and the background ones.
	Gates []Say
	// Hold: an analysis the step waits for has not passed (not started, or
	// running): the step does not go on, whatever its pause or approvals.
	Hold bool
	// NeedsApproval: a gate wants an approval besides its analysis
	// (AnalysisAndApproval), or is Inconclusive (a person decides:
	// approving the step lets it go on). A gate with advance: Approval
	// leaves the step to its own pause rules: it neither asks for an
	// approval nor waives one.
	NeedsApproval bool
	// ApprovalWaived: at least one gate analyses the step, every one of
	// them advances on its analysis alone, and they all passed: a pause
	// without a duration no longer waits for an approval. A timed pause
	// still waits for its duration.
	ApprovalWaived bool
	// Abort: a gate whose onFailure is Abort failed, at this step or in
	// the background: the release is aborted at once.
	Abort bool
	// Failures are the failed gates' messages, "gate: message", Report
	// ones included.
	Failures []string
	// Message sums it up for the Rollout's status: "gate: message; ...".
	Message string
	// Short sums it up for a commit status: the gates' short messages,
	// without their names when only one gate has a say.
	Short string
}

// AbortBy returns the first gate whose failure aborts the release, and its
// failure; false when none does.
func (d Decision) AbortBy() (Say, bool) {
	for _, s := range d.Gates {
		if s.Verdict == analysisv1alpha1.VerdictFailed && s.OnFailure == analysisv1alpha1.FailureAbort {
			return s, true
		}
	}
	return Say{}, false
}

// Analyses reports whether a bound gate analyses step (background gates
// aside).
func (d Decision) Analyses(step int32) bool {
	for _, s := range d.Steps {
		if s == step {
			return true
		}
	}
	return false
}

// Analysed reports whether any gate has a say on the step.
func (d Decision) Analysed() bool { return len(d.Gates) > 0 }

// For returns what gates say about ro's current step. Gates of other
// namespaces, whose selector does not pick ro, or that are suspended, have
// no say.
func For(gates []analysisv1alpha1.MetricGate, ro *rolloutsv1beta1.Rollout) Decision {
	p, ok := progress.Of(ro)
	if !ok {
		return Decision{}
	}
	step := p.Common.CurrentStepIndex
	d := Decision{Revision: p.Revision, Step: step}
	since := Since(ro)
	steps := map[int32]bool{}
	stepGates, waived := 0, true
	sorted := append([]analysisv1alpha1.MetricGate(nil), gates...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i := range sorted {
		g := &sorted[i]
		if !binds(g, ro) {
			continue
		}
		bg := g.Spec.Run.Background
		if !bg {
			for _, st := range g.Spec.Run.Steps {
				steps[st] = true
			}
		}
		if !bg && !g.Spec.RunsAt(step) {
			continue
		}
		runStep := step
		if bg {
			runStep = 0
		}
		say := Say{Gate: g.Name, Background: bg, Advance: g.Spec.AdvanceOrDefault(), OnFailure: g.Spec.OnFailureOrDefault()}
		run := runOf(g, ro.Name, p, runStep, since)
		if run != nil {
			say.Verdict = run.Verdict
		}
		say.Message, say.Short = message(&g.Spec, run), short(&g.Spec, run)
		if say.Verdict == analysisv1alpha1.VerdictFailed {
			say.Failure = run.Message
		}
		d.Gates = append(d.Gates, say)
		if say.Verdict == analysisv1alpha1.VerdictFailed {
			d.Failures = append(d.Failures, g.Name+": "+run.Message)
			d.Abort = d.Abort || say.OnFailure == analysisv1alpha1.FailureAbort
		}
		if bg {
			continue
		}
		stepGates++
		if say.Advance != analysisv1alpha1.AdvanceOnAnalysis || say.Verdict != analysisv1alpha1.VerdictPassed {
			waived = false
		}
		switch {
		case say.Advance == analysisv1alpha1.AdvanceOnApproval:
			// The step's own pause rules decide; a failure can still abort.
		case say.Verdict == analysisv1alpha1.VerdictInconclusive:
			d.NeedsApproval = true
		case say.Verdict == analysisv1alpha1.VerdictFailed:
			// Abort acts; a Report failure holds nothing.
		case say.Verdict != analysisv1alpha1.VerdictPassed:
			d.Hold = true
		}
		if say.Advance == analysisv1alpha1.AdvanceOnAnalysisAndApproval {
			d.NeedsApproval = true
		}
	}
	d.ApprovalWaived = stepGates > 0 && waived
	for st := range steps {
		d.Steps = append(d.Steps, st)
	}
	sort.Slice(d.Steps, func(i, j int) bool { return d.Steps[i] < d.Steps[j] })
	d.Message = summary(d)
	d.Short = shortSummary(d)
	return d
}

// Since is when the release of ro's current revision last started over
// because it was retried (sluice.dev/retry naming that revision): runs
// started before it belong to the release that was aborted and say
// nothing of the retried one. Zero when it was not retried.
func Since(ro *rolloutsv1beta1.Rollout) time.Time {
	p, ok := progress.Of(ro)
	raw, has := ro.Annotations[rolloutsv1beta1.RetryAnnotation]
	if !ok || !has {
		return time.Time{}
	}
	r, err := abort.Resolve(raw, ro.Annotations[rolloutsv1beta1.RetryContextAnnotation])
	if err != nil || r.At == nil || r.Revision != p.Revision {
		return time.Time{}
	}
	return *r.At
}

// Stale reports whether run belongs to the release before the retry at
// since. A run's start is kept to the second, so a run of since's own
// second cannot be told from one of the aborted release and counts as
// stale; the analysis starts the first run of a retried release in a later
// second (RunsFrom).
func Stale(run *analysisv1alpha1.AnalysisRun, since time.Time) bool {
	return !since.IsZero() && !run.StartedAt.After(since.Truncate(time.Second))
}

// RunsFrom is the earliest time a run of the release retried at since may
// start and not be Stale: the second after since's. Zero when not retried.
func RunsFrom(since time.Time) time.Time {
	if since.IsZero() {
		return time.Time{}
	}
	return since.Truncate(time.Second).Add(time.Second)
}

// binds reports whether g has a say on ro.
func binds(g *analysisv1alpha1.MetricGate, ro *rolloutsv1beta1.Rollout) bool {
	if g.Namespace != ro.Namespace || g.Spec.Suspend || g.DeletionTimestamp != nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(&g.Spec.RolloutSelector)
	return err == nil && sel.Matches(labels.Set(ro.Labels))
}

// runOf is g's run of step for the release p describes, or nil.
func runOf(g *analysisv1alpha1.MetricGate, rollout string, p progress.Progress, step int32, since time.Time) *analysisv1alpha1.AnalysisRun {
	ra := g.Status.RolloutAnalysisOf(rollout)
	if ra == nil || ra.Revision != p.NewPodRevision() || ra.RolloutID != p.Common.ObservedRolloutID {
		return nil
	}
	run := ra.RunOf(step)
	if run == nil || Stale(run, since) || run.FinishedAt != nil && !run.Verdict.Done() {
		// Of the release before a retry, or stopped before its verdict
		// (the release left the step): a new run is to come.
		return nil
	}
	return run
}

// message says a gate's run for people: "analysis 3/5 passed (...)", 5
// being the measurements the metrics take in all (those taken, for
// metrics that measure until the release ends).
func message(spec *analysisv1alpha1.MetricGateSpec, run *analysisv1alpha1.AnalysisRun) string {
	if run == nil {
		return "analysis not started yet"
	}
	switch run.Verdict {
	case analysisv1alpha1.VerdictFailed:
		return "analysis failed: " + run.Message
	case analysisv1alpha1.VerdictInconclusive:
		return "analysis inconclusive: " + run.Message
	}
	var ok, total int32
	for _, m := range run.Metrics {
		ok += m.Successful
		total += m.Measured
		for _, ms := range spec.Metrics {
			if ms.Name == m.Name && ms.Count > 0 {
				total += ms.Count - m.Measured
			}
		}
	}
	return fmt.Sprintf("analysis %d/%d passed (%s)", ok, total, run.Message)
}

// short says a gate's run in few words: "analysis 3/5 passed
// (error-rate 0.004)", the failure, or "analysis not started yet".
func short(spec *analysisv1alpha1.MetricGateSpec, run *analysisv1alpha1.AnalysisRun) string {
	if run == nil {
		return "analysis not started yet"
	}
	switch run.Verdict {
	case analysisv1alpha1.VerdictFailed, analysisv1alpha1.VerdictInconclusive:
		return message(spec, run)
	}
	var ok, total int32
	values := make([]string, 0, len(run.Metrics))
	for _, m := range run.Metrics {
		ok += m.Successful
		total += m.Measured
		for _, ms := range spec.Metrics {
			if ms.Name == m.Name && ms.Count > 0 {
				total += ms.Count - m.Measured
			}
		}
		if n := len(m.Measurements); n > 0 && m.Measurements[n-1].Value != "" {
			values = append(values, m.Name+" "+m.Measurements[n-1].Value)
		}
	}
	s := fmt.Sprintf("analysis %d/%d passed", ok, total)
	if len(values) > 0 {
		s += " (" + strings.Join(values, ", ") + ")"
	}
	return s
}

func shortSummary(d Decision) string {
	if len(d.Gates) == 1 {
		return d.Gates[0].Short
	}
	parts := make([]string, 0, len(d.Gates))
	for _, s := range d.Gates {
		parts = append(parts, s.Gate+": "+s.Short)
	}
	return strings.Join(parts, "; ")
}

func summary(d Decision) string {
	parts := make([]string, 0, len(d.Gates))
	for _, s := range d.Gates {
		parts = append(parts, s.Gate+": "+s.Message)
	}
	return strings.Join(parts, "; ")
}
