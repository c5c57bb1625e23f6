package analysis

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/provider"
	"github.com/sluice-dev/sluice/analysis/providers"
	"github.com/sluice-dev/sluice/analysis/stepgate"
	"github.com/sluice-dev/sluice/analysis/vars"
	"github.com/sluice-dev/sluice/analysis/verdict"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// gather lists the Rollouts the gate binds.
func (r *Reconciler) gather(ctx context.Context, s *scope) error {
	sel, err := metav1.LabelSelectorAsSelector(&s.gate.Spec.RolloutSelector)
	if err != nil {
		return fmt.Errorf("spec.rolloutSelector: %w", err)
	}
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.gate.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing rollouts: %w", err)
	}
	s.rollouts = list.Items
	return nil
}

// reconcileRollouts analyses each bound Rollout's release and drops the
// records of Rollouts no longer bound.
func (r *Reconciler) reconcileRollouts(ctx context.Context, s *scope) error {
	out := make([]analysisv1alpha1.RolloutAnalysis, 0, len(s.rollouts))
	for i := range s.rollouts {
		ro := &s.rollouts[i]
		out = append(out, r.reconcileRollout(ctx, s, ro))
	}
	if len(out) > 200 {
		out = out[:200]
	}
	s.gate.Status.Rollouts = out
	s.gate.Status.BoundRollouts = int32(len(s.rollouts)) //nolint:gosec // bounded by the list
	return nil
}

// reconcileRollout starts, measures and stops the runs of ro's release.
func (r *Reconciler) reconcileRollout(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout) analysisv1alpha1.RolloutAnalysis {
	spec := &s.gate.Spec
	rel := releaseOf(ro)
	e := entryFor(s.gate.Status.RolloutAnalysisOf(ro.Name), ro.Name, rel)
	now := metav1.NewTime(r.Clock.Now())
	for _, run := range stopRuns(&e, spec, rel, now) {
		s.events = append(s.events, r.verdictEvents(s.gate, ro, run)...)
	}
	step, ok := wantedRun(spec, rel)
	if !ok {
		return e
	}
	if from := stepgate.RunsFrom(rel.Since); now.Time.Before(from) && !liveRun(&e, step) {
		// A run started now could not be told from a run of the aborted
		// release (stepgate.Stale): start it in the next second.
		s.wakeIn(from.Sub(now.Time))
		return e
	}
	if startRun(&e, step, now) {
		ctrl.LoggerFrom(ctx).Info("Starting analysis", "rollout", client.ObjectKeyFromObject(ro), "step", step, "revision", rel.Revision)
	}
	run := e.RunOf(step)
	if run == nil || run.FinishedAt != nil {
		return e
	}
	syncMetrics(run, spec)
	for i := range run.Metrics {
		mr := &run.Metrics[i]
		m := metricSpec(spec, mr.Name)
		if m == nil || mr.Verdict.Done() {
			continue
		}
		key := provider.Key{Rollout: ro.Name, Revision: e.Revision, RolloutID: e.RolloutID, Step: step, Metric: m.Name, Index: mr.Measured + 1,
			Started: run.StartedAt.Unix()}
		if wait := r.measure(ctx, s, ro, run, m, mr, key); wait > 0 {
			s.wakeIn(wait)
		}
	}
	verdict.Summarise(run)
	if run.Verdict.Done() {
		t := metav1.NewTime(r.Clock.Now())
		run.FinishedAt = &t
		s.events = append(s.events, r.verdictEvents(s.gate, ro, run)...)
	}
	return e
}

// measure takes metric m's measurement key.Index when it is due and records
// it; it returns how long until the metric needs looking at again (0:
// never, its verdict is final).
func (r *Reconciler) measure(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, run *analysisv1alpha1.AnalysisRun,
	m *analysisv1alpha1.Metric, mr *analysisv1alpha1.MetricRun, key provider.Key) time.Duration {
	if wait := dueAt(run, m, mr).Sub(r.Clock.Now()); wait > 0 {
		return wait
	}
	meas := analysisv1alpha1.Measurement{Index: key.Index}
	p, kind, err := r.Providers.For(m)
	var res provider.Result
	if err == nil {
		res, err = p.Measure(ctx, provider.Query{Gate: s.gate, Metric: m, Rollout: ro, Vars: vars.Of(ro, run.Step), Key: key})
	}
	switch {
	case err != nil:
		meas.Outcome, meas.Message = analysisv1alpha1.OutcomeError, err.Error()
	case res.Pending:
		return pendingRecheck
	default:
		meas.Value = verdict.Display(res.Value)
		meas.Outcome, meas.Message = r.judge(ctx, m, kind, res.Value)
	}
	meas.Message = verdict.Truncate(meas.Message, verdict.MaxMessage)
	meas.Time = metav1.NewMicroTime(r.Clock.Now())
	if !verdict.Record(mr, meas, verdict.LimitsOf(m), s.gate.Spec.HistoryLimitOrDefault()) || mr.Verdict.Done() {
		return 0
	}
	return dueAt(run, m, mr).Sub(r.Clock.Now())
}

// judge evaluates the metric's conditions (the kind's default when it sets
// none) on value.
func (r *Reconciler) judge(ctx context.Context, m *analysisv1alpha1.Metric, kind providers.Kind, value any) (analysisv1alpha1.Outcome, string) {
	success, failure := m.SuccessCondition, m.FailureCondition
	if success == "" && failure == "" {
		success = kind.DefaultSuccessCondition
	}
	var checks [2]*verdict.Check
	for i, c := range []struct{ field, expr string }{{"successCondition", success}, {"failureCondition", failure}} {
		if c.expr == "" {
			continue
		}
		prg, err := r.Conditions.Compile(c.expr)
		if err != nil {
			return analysisv1alpha1.OutcomeError, fmt.Sprintf("%s: %v", c.field, err)
		}
		held, err := prg.Eval(ctx, value)
		if err != nil {
			return analysisv1alpha1.OutcomeError, fmt.Sprintf("%s: %v", c.field, err)
		}
		checks[i] = &verdict.Check{Expr: c.expr, Held: held}
	}
	return verdict.Judge(checks[0], checks[1])
}

// verdictEvents reports a run's final verdict on the gate and on the
// Rollout: AnalysisPassed, AnalysisFailed or AnalysisInconclusive.
func (r *Reconciler) verdictEvents(gate *analysisv1alpha1.MetricGate, ro *rolloutsv1beta1.Rollout, run *analysisv1alpha1.AnalysisRun) []event {
	if !run.Verdict.Done() {
		return nil
	}
	reason := "Analysis" + string(run.Verdict)
	where := fmt.Sprintf("step %d", run.Step)
	if run.Step == backgroundStep {
		where = "background"
	}
	typ := warning(run.Verdict)
	return []event{
		{on: gate, typ: typ, reason: reason, action: "Analyse", format: "Rollout %s, %s: %s", args: []any{ro.Name, where, run.Message}},
		{on: ro, typ: typ, reason: reason, action: "Analyse", format: "MetricGate %s, %s: %s", args: []any{gate.Name, where, run.Message}},
	}
}
