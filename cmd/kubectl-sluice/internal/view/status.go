package view

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/eventtime"
	"github.com/sluice-dev/sluice/observability/snapshot"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
)

// MaxEvents is how many of a Rollout's latest events `status` shows.
const MaxEvents = 8

// CurrentMarker starts the line of the current step in `status`.
const CurrentMarker = "=>"

// Snapshot is what `status` shows of one Rollout, read at one moment: the
// snapshot the web view draws as well.
type Snapshot = snapshot.Snapshot

// Status writes the page of `status` for s.
func Status(w io.Writer, s Snapshot) error {
	var b strings.Builder
	ro := s.Rollout
	p, hasProgress := progress.Of(ro)
	writeHeader(&b, s, p, hasProgress)
	writeSteps(&b, s, p)
	writePods(&b, s, p)
	writeAnalysis(&b, s)
	writeApproval(&b, ro, p)
	writeApprovals(&b, ro, p, s.Now)
	writeConditions(&b, ro)
	writeEvents(&b, s.Events, s.Now)
	if len(s.Problems) > 0 {
		fmt.Fprintf(&b, "\nCould not read:\n  %s\n", strings.Join(s.Problems, "\n  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHeader(b *strings.Builder, s Snapshot, p progress.Progress, ok bool) {
	ro := s.Rollout
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	ref := ro.Spec.WorkloadRef
	fmt.Fprintf(tw, "Rollout:\t%s\n", progress.Ref(ro))
	fmt.Fprintf(tw, "Workload:\t%s/%s (%s), %s\n", ref.Kind, ref.Name, ref.APIVersion, progress.Style(ro))
	phase := orNone(string(ro.Status.Phase))
	if at := progress.AtStep(ro); at != "" {
		phase += fmt.Sprintf(", step %s %s", at, p.Common.CurrentStepState)
	}
	fmt.Fprintf(tw, "Phase:\t%s\n", phase)
	if ro.Spec.Strategy.Paused {
		fmt.Fprintf(tw, "Paused:\tyes, spec.strategy.paused; resume with %s\n", progress.Command(ro, "resume"))
	}
	if ro.Spec.Disabled {
		fmt.Fprintf(tw, "Disabled:\tyes, spec.disabled: updates of the workload are not held\n")
	}
	fmt.Fprintf(tw, "Message:\t%s\n", orNone(ro.Status.Message))
	if a, aborted := progress.AbortOf(ro); aborted {
		line := fmt.Sprintf("revision %s at step %d by %s", a.Revision, a.Step, a.Who())
		if a.At != nil {
			line += ", " + Age(a.At.Time, s.Now) + " ago"
		}
		if a.Reason != "" {
			line += " (" + a.Reason + ")"
		}
		fmt.Fprintf(tw, "Aborted:\t%s: %s\n", line, a.State())
	}
	if ok {
		fmt.Fprintf(tw, "Revisions:\tstable %s, new %s\n", orNone(p.Common.StableRevision), orNone(p.Revision))
	}
	switch ws := s.Workload; {
	case ws != nil:
		fmt.Fprintf(tw, "Updated:\t%d/%d pods on the new revision, %d ready\n", ws.UpdatedReplicas, ws.Replicas, ws.UpdatedReadyReplicas)
	case s.WorkloadErr != "":
		fmt.Fprintf(tw, "Updated:\tunknown: %s\n", s.WorkloadErr)
	}
	if br := s.BatchRelease; br != nil {
		cs := br.Status.CanaryStatus
		fmt.Fprintf(tw, "BatchRelease:\t%s, phase %s, batch %d %s, %d updated, %d ready\n", br.Name, orNone(string(br.Status.Phase)),
			cs.CurrentBatch+1, orNone(string(cs.CurrentBatchState)), cs.UpdatedReplicas, cs.UpdatedReadyReplicas)
	}
	_ = tw.Flush()
}

func writeSteps(b *strings.Builder, s Snapshot, p progress.Progress) {
	ro := s.Rollout
	steps := ro.Spec.Strategy.Steps()
	fmt.Fprintf(b, "\nSteps:\n")
	if len(steps) == 0 {
		fmt.Fprintf(b, "  none: a release updates every pod at once\n")
		return
	}
	var replicas int32
	if s.Workload != nil {
		replicas = s.Workload.Replicas
	}
	states := progress.StepStates(ro)
	withTraffic := false
	for _, st := range steps {
		withTraffic = withTraffic || progress.StepTraffic(st) != ""
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for i, st := range steps {
		var mark, state string
		switch states[i] {
		case progress.StepCurrent, progress.StepPaused:
			mark = CurrentMarker
			state = string(p.Common.CurrentStepState)
			if t := p.Common.LastUpdateTime; t != nil {
				state += " for " + Age(t.Time, s.Now)
			}
		case progress.StepDone:
			mark = "done"
		case progress.StepAborted:
			mark = "aborted"
		case progress.StepPending:
		}
		cells := []string{"  " + mark, fmt.Sprint(i + 1), "replicas " + progress.StepReplicas(st), "pause " + progress.StepPause(ro, i, replicas)}
		if withTraffic {
			cells = append(cells, orNone(progress.StepTraffic(st)))
		}
		if state != "" {
			cells = append(cells, state)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

func writePods(b *strings.Builder, s Snapshot, p progress.Progress) {
	ws := s.Workload
	if ws == nil || ws.RevisionLabel == "" {
		return
	}
	selector := none
	if ws.PodSelector != nil {
		selector = metav1.FormatLabelSelector(ws.PodSelector)
	}
	fmt.Fprintf(b, "\nPods (selector %s, revision label %s):\n", selector, ws.RevisionLabel)
	groups, terminating := p.GroupPods(s.Pods, ws.RevisionLabel)
	if len(groups) == 0 {
		fmt.Fprintf(b, "  none\n")
	} else {
		tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  REVISION\tROLE\tPODS\tREADY\tIMAGES")
		for _, g := range groups {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\n", orNone(g.Revision), g.Role, g.Pods, g.Ready, strings.Join(g.Images, ","))
		}
		_ = tw.Flush()
	}
	if terminating > 0 {
		fmt.Fprintf(b, "  and %d pod(s) terminating\n", terminating)
	}
}

// writeApproval says what the release waits for, and the command that gives
// it.
func writeApproval(b *strings.Builder, ro *rolloutsv1beta1.Rollout, p progress.Progress) {
	if a, ok := progress.AbortOf(ro); ok {
		fmt.Fprintf(b, "\nAborted:\n  The release of revision %s is held on revision %s; approvals are refused.\n", a.Revision, a.StableRevision)
		for _, l := range a.Advice(ro) {
			fmt.Fprintf(b, "  %s\n", l)
		}
		return
	}
	w := progress.WaitOf(ro)
	idx, n := w.Step, w.Steps
	switch w.Kind {
	case progress.WaitNothing:
	case progress.WaitFrozen:
		fmt.Fprintf(b, "\nPaused:\n  The release is frozen by spec.strategy.paused. Resume it with:\n    %s\n", progress.Command(ro, "resume"))
	case progress.WaitPause:
		fmt.Fprintf(b, "\nPause:\n  Step %d/%d pauses for %ds and then goes on by itself.\n", idx, n, w.Seconds)
	case progress.WaitApproval:
		fmt.Fprintf(b, "\nApproval needed:\n  Step %d/%d of revision %s waits for approval. Approve it with:\n    %s\n",
			idx, n, p.Revision, progress.Command(ro, "approve"))
		if idx < n {
			fmt.Fprintf(b, "  Approve every remaining step with:\n    %s\n", progress.Command(ro, "promote-full"))
		}
	}
}

// writeApprovals lists the approvals sluice applied to the revision being
// released.
func writeApprovals(b *strings.Builder, ro *rolloutsv1beta1.Rollout, p progress.Progress, now time.Time) {
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || p.Revision == "" {
		return
	}
	var lines []string
	for _, r := range records {
		if r.Revision != p.Revision {
			continue
		}
		at := none
		if r.At != nil {
			at = Age(*r.At, now) + " ago"
		}
		what := fmt.Sprintf("step %d", r.Step)
		switch r.Action {
		case approval.ActionAbort:
			what = fmt.Sprintf("aborted at step %d", r.Step)
		case approval.ActionRetry:
			what = "retried from step 1"
		}
		lines = append(lines, fmt.Sprintf("  %s by %s via %s, %s\n", what, orNone(r.By), orNone(r.Via), at))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\nApprovals of revision %s:\n%s", p.Revision, strings.Join(lines, ""))
}

// notable reports whether c is a condition that is not OK: Supported or
// Succeeded False, Stalled True.
func notable(c *rolloutsv1beta1.RolloutCondition) bool {
	switch c.Type {
	case rolloutsv1beta1.RolloutConditionSupported, rolloutsv1beta1.RolloutConditionSucceeded:
		return c.Status == corev1.ConditionFalse
	case rolloutsv1beta1.RolloutConditionStalled:
		return c.Status == corev1.ConditionTrue
	}
	return false
}

func writeConditions(b *strings.Builder, ro *rolloutsv1beta1.Rollout) {
	var lines []string
	for i := range ro.Status.Conditions {
		c := &ro.Status.Conditions[i]
		if notable(c) {
			lines = append(lines, fmt.Sprintf("  %s=%s (%s): %s\n", c.Type, c.Status, orNone(c.Reason), orNone(c.Message)))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\nConditions:\n%s", strings.Join(lines, ""))
}

func writeEvents(b *strings.Builder, events []eventsv1.Event, now time.Time) {
	events = sortEvents(events)
	if len(events) > MaxEvents {
		events = events[len(events)-MaxEvents:]
	}
	fmt.Fprintf(b, "\nEvents:\n")
	if len(events) == 0 {
		fmt.Fprintf(b, "  none\n")
		return
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  AGE\tTYPE\tREASON\tMESSAGE")
	for i := range events {
		e := &events[i]
		age := Age(eventtime.Last(e), now)
		if n := eventtime.Count(e); n > 1 {
			age += fmt.Sprintf(" (x%d)", n)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", age, e.Type, e.Reason, oneLine(e.Note))
	}
	_ = tw.Flush()
}
