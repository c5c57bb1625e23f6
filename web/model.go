package web

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/snapshot"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload/batch"
)

// MaxEvents is how many of a Rollout's latest events the picture shows.
const MaxEvents = 15

// Input is everything the picture of one Rollout is drawn from, read at
// one moment: the snapshot kubectl sluice status draws as well.
type Input = snapshot.Snapshot

// StepState is how a step is drawn on the progress track
// (release/progress, shared with kubectl sluice).
type StepState = progress.StepState

// The states of a step on the progress track.
const (
	StepDone    = progress.StepDone
	StepCurrent = progress.StepCurrent
	StepPaused  = progress.StepPaused
	StepPending = progress.StepPending
	StepAborted = progress.StepAborted
)

// View is what the page of one Rollout draws; the JSON endpoint serves it
// as it is.
type View struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Workload is "<Kind>/<name>" of the released workload.
	Workload string `json:"workload"`
	// Style names how the workload is released.
	Style   string `json:"style"`
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	// Frozen is true when spec.strategy.paused freezes the release.
	Frozen bool `json:"frozen,omitempty"`
	// InRelease is true while a release is in progress.
	InRelease bool `json:"inRelease"`
	// StepIndex is the current step, counted from 1; 0 when none.
	StepIndex int32 `json:"stepIndex"`
	// StepCount is the number of steps.
	StepCount int32 `json:"stepCount"`
	// StepState is the controller's state of the current step (StepPaused,
	// StepUpgrade, Completed, ...).
	StepState string `json:"stepState,omitempty"`
	// Waiting says what the release waits for, empty when nothing.
	Waiting string `json:"waiting,omitempty"`
	// Aborted describes an aborted release; nil when it is not aborted.
	Aborted        *Aborted `json:"aborted,omitempty"`
	StableRevision string   `json:"stableRevision,omitempty"`
	// NewRevision is the revision being released.
	NewRevision string `json:"newRevision,omitempty"`
	// Replicas, Updated and UpdatedReady count the workload's pods, those of
	// the new revision and those of them ready.
	Replicas     int32       `json:"replicas"`
	Updated      int32       `json:"updated"`
	UpdatedReady int32       `json:"updatedReady"`
	Steps        []Step      `json:"steps"`
	Traffic      Traffic     `json:"traffic"`
	Pods         []PodGroup  `json:"pods"`
	Terminating  int         `json:"terminating,omitempty"`
	Approvals    []Approval  `json:"approvals"`
	Git          Git         `json:"git"`
	Conditions   []Condition `json:"conditions"`
	Events       []Event     `json:"events"`
	// Analysis draws the measurements of the release's analyses, one
	// chart per gate, run and metric.
	Analysis     []Chart      `json:"analysis,omitempty"`
	BatchRelease *BatchStatus `json:"batchRelease,omitempty"`
	Problems     []string     `json:"problems,omitempty"`
}

// Aborted is an aborted release: held on the stable revision until the
// template changes or it is retried.
type Aborted struct {
	// Revision is the aborted revision; Step the step it was aborted at.
	Revision string `json:"revision"`
	Step     int32  `json:"step"`
	// Who aborted it and how ("ops via github-label"), and when.
	Who string `json:"who"`
	Age string `json:"age,omitempty"`
	// Reason says why, as whoever aborted it wrote.
	Reason string `json:"reason,omitempty"`
	// State says where the hold is, Advice what ends it.
	State  string   `json:"state"`
	Advice []string `json:"advice"`
}

// Step is one step of the progress track.
type Step struct {
	// Number counts from 1.
	Number int32 `json:"number"`
	// Replicas is the step's replicas as written ("1", "50%").
	Replicas string `json:"replicas"`
	// Pods is how many pods the step puts on the new revision; 0 when the
	// workload's size is unknown.
	Pods int32 `json:"pods"`
	// Traffic describes the step's traffic, empty when it sets none.
	Traffic string `json:"traffic,omitempty"`
	// Pause says how the step waits once done.
	Pause string    `json:"pause"`
	State StepState `json:"state"`
}

// Traffic is the split of requests between the revisions now.
type Traffic struct {
	// Routed is true when the Rollout shifts traffic through routes.
	Routed bool `json:"routed"`
	// NewPercent and StablePercent are the shares of the revisions.
	NewPercent    int `json:"newPercent"`
	StablePercent int `json:"stablePercent"`
	// Note says where the split comes from.
	Note string `json:"note"`
}

// PodGroup counts the live pods of one revision.
type PodGroup struct {
	Revision string `json:"revision"`
	// Role is stable, new, current (both: a finished release) or other.
	Role   string   `json:"role"`
	Pods   int      `json:"pods"`
	Ready  int      `json:"ready"`
	Images []string `json:"images"`
}

// Approval is one approval sluice applied, from sluice.dev/approvals.
type Approval struct {
	Revision string `json:"revision"`
	Step     int32  `json:"step"`
	By       string `json:"by"`
	Via      string `json:"via"`
	At       string `json:"at,omitempty"`
	Age      string `json:"age,omitempty"`
	// Current is true for approvals of the revision being released.
	Current bool `json:"current"`
}

// Condition is a condition of the Rollout.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Notable is true for a condition that is not OK.
	Notable bool `json:"notable"`
}

// Event is one line of the events timeline, oldest first.
type Event struct {
	Age     string `json:"age"`
	At      string `json:"at"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Count   int32  `json:"count"`
}

// BatchStatus is the Rollout's BatchRelease in one line.
type BatchStatus struct {
	Name         string `json:"name"`
	Phase        string `json:"phase"`
	Batch        int32  `json:"batch"`
	State        string `json:"state"`
	Updated      int32  `json:"updated"`
	UpdatedReady int32  `json:"updatedReady"`
}

// release is where a Rollout's release is (release/progress, shared with
// kubectl sluice), and whether its status holds one.
type release struct {
	progress.Progress
	ok bool
}

func releaseOf(ro *rolloutsv1beta1.Rollout) release {
	p, ok := progress.Of(ro)
	return release{Progress: p, ok: ok}
}

// Build computes the picture of one Rollout from what was read. It is
// pure: the page, the JSON endpoint and the live stream all draw its
// result.
func Build(in Input) View {
	ro := in.Rollout
	p := releaseOf(ro)
	steps := ro.Spec.Strategy.Steps()
	v := View{
		Namespace: ro.Namespace, Name: ro.Name,
		Workload: ro.Spec.WorkloadRef.Kind + "/" + ro.Spec.WorkloadRef.Name,
		Style:    progress.Style(ro), Phase: string(ro.Status.Phase), Message: ro.Status.Message,
		Frozen:    ro.Spec.Strategy.Paused,
		InRelease: progress.InRelease(ro),
		StepCount: int32(len(steps)), //nolint:gosec // at most 50 steps (CRD validation)
		Problems:  append([]string(nil), in.Problems...),
	}
	if in.WorkloadErr != "" {
		v.Problems = append(v.Problems, fmt.Sprintf("workload %s/%s: %s", ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name, in.WorkloadErr))
	}
	if p.ok {
		v.StepIndex, v.StepState = p.Common.CurrentStepIndex, string(p.Common.CurrentStepState)
		v.StableRevision, v.NewRevision = p.Common.StableRevision, p.Revision
		v.Updated, v.UpdatedReady = p.Updated, p.UpdatedReady
	}
	if ws := in.Workload; ws != nil {
		v.Replicas, v.Updated, v.UpdatedReady = ws.Replicas, ws.UpdatedReplicas, ws.UpdatedReadyReplicas
	}
	if a, ok := progress.AbortOf(ro); ok {
		v.Aborted = &Aborted{Revision: a.Revision, Step: a.Step, Who: a.Who(), Reason: a.Reason, State: a.State(), Advice: a.Advice(ro)}
		if a.At != nil {
			v.Aborted.Age = age(a.At.Time, in.Now)
		}
	}
	v.Steps = buildSteps(ro, v.Replicas)
	v.Waiting = waiting(ro)
	v.Traffic = buildTraffic(ro, v)
	if ws := in.Workload; ws != nil && ws.RevisionLabel != "" {
		v.Pods, v.Terminating = groupPods(in.Pods, ws.RevisionLabel, p)
	}
	v.Approvals = buildApprovals(ro, p, in.Now)
	v.Git = gitOf(in.WorkloadAnnotations, ro.Annotations)
	v.Conditions = buildConditions(ro)
	v.Events = buildEvents(in.Events, in.Now)
	v.Analysis = buildCharts(in.Analysis)
	if br := in.BatchRelease; br != nil {
		cs := br.Status.CanaryStatus
		v.BatchRelease = &BatchStatus{Name: br.Name, Phase: string(br.Status.Phase), Batch: cs.CurrentBatch + 1,
			State: string(cs.CurrentBatchState), Updated: cs.UpdatedReplicas, UpdatedReady: cs.UpdatedReadyReplicas}
	}
	return v
}

// buildSteps draws the progress track: each step as release/progress
// describes it, for a workload of replicas pods (0: unknown).
func buildSteps(ro *rolloutsv1beta1.Rollout, replicas int32) []Step {
	steps := ro.Spec.Strategy.Steps()
	states := progress.StepStates(ro)
	out := make([]Step, 0, len(steps))
	for i, st := range steps {
		s := Step{Number: int32(i + 1), Replicas: progress.StepReplicas(st), Traffic: progress.StepTraffic(st), //nolint:gosec // at most 50 steps
			Pause: progress.StepPause(ro, i, replicas), State: states[i]}
		if d, err := batch.DesiredUpdated(st.Replicas, replicas); err == nil {
			s.Pods = d
		}
		out = append(out, s)
	}
	return out
}

// waiting says what a release in progress waits for (progress.WaitOf, as
// kubectl sluice status says it).
func waiting(ro *rolloutsv1beta1.Rollout) string {
	switch w := progress.WaitOf(ro); w.Kind {
	case progress.WaitFrozen:
		return "frozen by spec.strategy.paused"
	case progress.WaitPause:
		return fmt.Sprintf("step %d pauses for %ds", w.Step, w.Seconds)
	case progress.WaitApproval:
		return fmt.Sprintf("approval of step %d", w.Step)
	case progress.WaitNothing:
	}
	return ""
}

// buildTraffic works out the split of requests now: the current step's
// weight when the Rollout routes traffic, else the share of ready pods.
func buildTraffic(ro *rolloutsv1beta1.Rollout, v View) Traffic {
	t := Traffic{Routed: progress.Routed(ro), StablePercent: 100}
	weight, weighted := progress.Weight(ro)
	switch {
	case !v.InRelease:
		t.Note = "no release in progress: every request goes to the current revision"
	case weighted:
		t.NewPercent, t.StablePercent = weight, 100-weight
		t.Note = fmt.Sprintf("weight of step %d on the routes", v.StepIndex)
	case v.Replicas > 0:
		n := int(v.UpdatedReady * 100 / v.Replicas)
		t.NewPercent, t.StablePercent = n, 100-n
		t.Note = "no weight set: requests spread over the ready pods of both revisions"
	default:
		t.Note = "unknown: the workload could not be read"
	}
	return t
}

// groupPods groups the live pods by the value of label as release/progress
// does for kubectl sluice.
func groupPods(pods []corev1.Pod, label string, p release) ([]PodGroup, int) {
	groups, terminating := p.GroupPods(pods, label)
	var out []PodGroup
	for _, g := range groups {
		out = append(out, PodGroup{Revision: g.Revision, Role: g.Role, Pods: g.Pods, Ready: g.Ready, Images: g.Images})
	}
	return out, terminating
}

// buildApprovals lists the record of applied approvals, newest last. A
// damaged record shows nothing.
func buildApprovals(ro *rolloutsv1beta1.Rollout, p release, now time.Time) []Approval {
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		return nil
	}
	out := make([]Approval, 0, len(records))
	for _, r := range records {
		a := Approval{Revision: r.Revision, Step: r.Step, By: r.By, Via: r.Via, Current: r.Revision != "" && r.Revision == p.Revision}
		if r.At != nil {
			a.At = r.At.UTC().Format(time.RFC3339)
			a.Age = age(*r.At, now)
		}
		out = append(out, a)
	}
	return out
}

func buildConditions(ro *rolloutsv1beta1.Rollout) []Condition {
	out := make([]Condition, 0, len(ro.Status.Conditions))
	for _, c := range ro.Status.Conditions {
		notable := false
		switch c.Type {
		case rolloutsv1beta1.RolloutConditionSupported, rolloutsv1beta1.RolloutConditionSucceeded:
			notable = c.Status == corev1.ConditionFalse
		case rolloutsv1beta1.RolloutConditionStalled:
			notable = c.Status == corev1.ConditionTrue
		}
		out = append(out, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message, Notable: notable})
	}
	return out
}

// age is how long ago t was, the way kubectl prints ages.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}
