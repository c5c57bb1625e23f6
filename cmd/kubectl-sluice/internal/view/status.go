package view

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/eventtime"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
)

// MaxEvents is how many of a Rollout's latest events `status` shows.
const MaxEvents = 8

// CurrentMarker starts the line of the current step in `status`.
const CurrentMarker = "=>"

// Snapshot is what `status` shows of one Rollout, read at one moment.
type Snapshot struct {
	// Rollout is the Rollout.
	Rollout *rolloutsv1beta1.Rollout
	// BatchRelease is the Rollout's BatchRelease, nil when there is none.
	BatchRelease *rolloutsv1beta1.BatchRelease
	// Workload is the workload as sluice sees it, nil when it could not
	// be read; WorkloadErr then says why.
	Workload    *workload.Status
	WorkloadErr string
	// Pods are the pods the workload's selector selects.
	Pods []corev1.Pod
	// Events are the events regarding the Rollout.
	Events []eventsv1.Event
	// Problems are what could not be read, one line each.
	Problems []string
	// Now is when the snapshot was taken; ages count from it.
	Now time.Time
}

// Status writes the page of `status` for s.
func Status(w io.Writer, s Snapshot) error {
	var b strings.Builder
	ro := s.Rollout
	p, hasProgress := progress.Of(ro)
	writeHeader(&b, s, p, hasProgress)
	writeSteps(&b, s, p, hasProgress)
	writePods(&b, s, p)
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
	if ok && p.Common.CurrentStepIndex > 0 {
		phase += fmt.Sprintf(", step %d/%d %s", p.Common.CurrentStepIndex, progress.Steps(ro), p.Common.CurrentStepState)
	}
	fmt.Fprintf(tw, "Phase:\t%s\n", phase)
	if ro.Spec.Strategy.Paused {
		fmt.Fprintf(tw, "Paused:\tyes, spec.strategy.paused; resume with %s\n", progress.Command(ro, "resume"))
	}
	if ro.Spec.Disabled {
		fmt.Fprintf(tw, "Disabled:\tyes, spec.disabled: updates of the workload are not held\n")
	}
	fmt.Fprintf(tw, "Message:\t%s\n", orNone(ro.Status.Message))
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

func writeSteps(b *strings.Builder, s Snapshot, p progress.Progress, ok bool) {
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
	idx := int32(0)
	completed := false // every step done, not rolled back
	if ok {
		idx = p.Common.CurrentStepIndex
		c := progress.Condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		completed = p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			(ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing || c == nil || c.Status != corev1.ConditionFalse)
	}
	inRelease := progress.InRelease(ro)
	withTraffic := false
	for _, st := range steps {
		withTraffic = withTraffic || Traffic(st) != ""
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for i, st := range steps {
		n := int32(i + 1) //nolint:gosec // at most 50 steps
		var mark, state string
		switch {
		case inRelease && n == idx:
			mark = CurrentMarker
			state = string(p.Common.CurrentStepState)
			if t := p.Common.LastUpdateTime; t != nil {
				state += " for " + Age(t.Time, s.Now)
			}
		case (inRelease && n < idx) || (completed && n <= idx):
			mark = "done"
		}
		last := i == len(steps)-1
		cells := []string{"  " + mark, fmt.Sprint(n), "replicas " + StepReplicas(st), "pause " + Pause(st.Pause, last, releasesAll(st, replicas))}
		if withTraffic {
			cells = append(cells, orNone(Traffic(st)))
		}
		if state != "" {
			cells = append(cells, state)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

// podGroup counts the live pods of one revision.
type podGroup struct {
	revision, role string
	pods, ready    int
	images         map[string]bool
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
	groups, terminating := groupPods(s.Pods, ws.RevisionLabel, p)
	if len(groups) == 0 {
		fmt.Fprintf(b, "  none\n")
	} else {
		tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  REVISION\tROLE\tPODS\tREADY\tIMAGES")
		for _, g := range groups {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\n", orNone(g.revision), g.role, g.pods, g.ready, strings.Join(sortedKeys(g.images), ","))
		}
		_ = tw.Flush()
	}
	if terminating > 0 {
		fmt.Fprintf(b, "  and %d pod(s) terminating\n", terminating)
	}
}

// groupPods groups the live pods by the value of label: the stable
// revision first, then the new one, then any other.
func groupPods(pods []corev1.Pod, label string, p progress.Progress) (groups []*podGroup, terminating int) {
	byRev := map[string]*podGroup{}
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil {
			terminating++
			continue
		}
		rev := pod.Labels[label]
		g := byRev[rev]
		if g == nil {
			g = &podGroup{revision: rev, role: roleOf(rev, p), images: map[string]bool{}}
			byRev[rev] = g
			groups = append(groups, g)
		}
		g.pods++
		if podReady(pod) {
			g.ready++
		}
		for _, c := range pod.Spec.Containers {
			g.images[c.Name+"="+c.Image] = true
		}
	}
	rank := map[string]int{"stable": 0, "current": 0, "new": 1, "other": 2}
	sort.SliceStable(groups, func(i, j int) bool {
		if rank[groups[i].role] != rank[groups[j].role] {
			return rank[groups[i].role] < rank[groups[j].role]
		}
		return groups[i].revision < groups[j].revision
	})
	return groups, terminating
}

// roleOf says what the pods of revision label value rev are to the
// release: stable, new, current (both: a finished release), or other.
func roleOf(rev string, p progress.Progress) string {
	return p.RoleOf(func(v string) bool { return rev != "" && rev == v })
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeApproval says what the release waits for, and the command that gives
// it.
func writeApproval(b *strings.Builder, ro *rolloutsv1beta1.Rollout, p progress.Progress) {
	if !progress.InRelease(ro) {
		return
	}
	idx, n := p.Common.CurrentStepIndex, progress.Steps(ro)
	switch {
	case ro.Spec.Strategy.Paused:
		fmt.Fprintf(b, "\nPaused:\n  The release is frozen by spec.strategy.paused. Resume it with:\n    %s\n", progress.Command(ro, "resume"))
	case p.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || idx < 1 || idx > n:
	case ro.Spec.Strategy.Steps()[idx-1].Pause.Duration != nil:
		fmt.Fprintf(b, "\nPause:\n  Step %d/%d pauses for %ds and then goes on by itself.\n", idx, n, *ro.Spec.Strategy.Steps()[idx-1].Pause.Duration)
	default:
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
		lines = append(lines, fmt.Sprintf("  step %d by %s via %s, %s\n", r.Step, orNone(r.By), orNone(r.Via), at))
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
