package web

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/batch"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
)

// MaxEvents is how many of a Rollout's latest events the picture shows.
const MaxEvents = 15

// Input is everything the picture of one Rollout is drawn from, read at
// one moment.
type Input struct {
	// Rollout is the Rollout drawn.
	Rollout *rolloutsv1beta1.Rollout
	// BatchRelease is the Rollout's BatchRelease, nil when there is none.
	BatchRelease *rolloutsv1beta1.BatchRelease
	// Workload is the workload as sluice sees it, nil when it could not be
	// read.
	Workload *workload.Status
	// WorkloadAnnotations are the annotations of the workload, where the
	// GitOps adapter names the commit being released.
	WorkloadAnnotations map[string]string
	// Pods are the pods the workload's selector selects.
	Pods []corev1.Pod
	// Events are the events regarding the Rollout.
	Events []eventsv1.Event
	// Problems are what could not be read, one line each.
	Problems []string
	// Now is when the input was read; ages count from it.
	Now time.Time
}

// StepState is how a step is drawn on the progress track.
type StepState string

// The states of a step on the progress track.
const (
	StepDone    StepState = "done"
	StepCurrent StepState = "current"
	StepPaused  StepState = "paused"
	StepPending StepState = "pending"
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
	Waiting        string `json:"waiting,omitempty"`
	StableRevision string `json:"stableRevision,omitempty"`
	// NewRevision is the revision being released.
	NewRevision string `json:"newRevision,omitempty"`
	// Replicas, Updated and UpdatedReady count the workload's pods, those of
	// the new revision and those of them ready.
	Replicas     int32        `json:"replicas"`
	Updated      int32        `json:"updated"`
	UpdatedReady int32        `json:"updatedReady"`
	Steps        []Step       `json:"steps"`
	Traffic      Traffic      `json:"traffic"`
	Pods         []PodGroup   `json:"pods"`
	Terminating  int          `json:"terminating,omitempty"`
	Approvals    []Approval   `json:"approvals"`
	Git          Git          `json:"git"`
	Conditions   []Condition  `json:"conditions"`
	Events       []Event      `json:"events"`
	BatchRelease *BatchStatus `json:"batchRelease,omitempty"`
	Problems     []string     `json:"problems,omitempty"`
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
		Style:    style(ro), Phase: string(ro.Status.Phase), Message: ro.Status.Message,
		Frozen:    ro.Spec.Strategy.Paused,
		InRelease: p.ok && ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && p.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted,
		StepCount: int32(len(steps)), //nolint:gosec // at most 50 steps (CRD validation)
		Problems:  in.Problems,
	}
	if p.ok {
		v.StepIndex, v.StepState = p.Common.CurrentStepIndex, string(p.Common.CurrentStepState)
		v.StableRevision, v.NewRevision = p.Common.StableRevision, p.Revision
		v.Updated, v.UpdatedReady = p.Updated, p.UpdatedReady
	}
	if ws := in.Workload; ws != nil {
		v.Replicas, v.Updated, v.UpdatedReady = ws.Replicas, ws.UpdatedReplicas, ws.UpdatedReadyReplicas
	}
	v.Steps = buildSteps(ro, p, v.InRelease, v.Replicas)
	v.Waiting = waiting(ro, v)
	v.Traffic = buildTraffic(ro, v)
	if ws := in.Workload; ws != nil && ws.RevisionLabel != "" {
		v.Pods, v.Terminating = groupPods(in.Pods, ws.RevisionLabel, p)
	}
	v.Approvals = buildApprovals(ro, p, in.Now)
	v.Git = gitOf(in.WorkloadAnnotations, ro.Annotations)
	v.Conditions = buildConditions(ro)
	v.Events = buildEvents(in.Events, in.Now)
	if br := in.BatchRelease; br != nil {
		cs := br.Status.CanaryStatus
		v.BatchRelease = &BatchStatus{Name: br.Name, Phase: string(br.Status.Phase), Batch: cs.CurrentBatch + 1,
			State: string(cs.CurrentBatchState), Updated: cs.UpdatedReplicas, UpdatedReady: cs.UpdatedReadyReplicas}
	}
	return v
}

// style names how ro releases its workload, for people.
func style(ro *rolloutsv1beta1.Rollout) string {
	switch s := ro.Spec.Strategy; {
	case s.BlueGreen != nil:
		return "blue-green"
	case s.Canary != nil && s.Canary.EnableExtraWorkloadForCanary:
		return "canary (extra canary workload)"
	case s.Canary != nil:
		return "multi-batch in place"
	}
	return "no strategy"
}

func buildSteps(ro *rolloutsv1beta1.Rollout, p release, inRelease bool, replicas int32) []Step {
	steps := ro.Spec.Strategy.Steps()
	idx := p.Common.CurrentStepIndex
	completed := false // every step done, not rolled back
	if p.ok {
		c := progress.Condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		completed = p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			(ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing || c == nil || c.Status != corev1.ConditionFalse)
	}
	out := make([]Step, 0, len(steps))
	for i, st := range steps {
		n := int32(i + 1) //nolint:gosec // at most 50 steps
		s := Step{Number: n, Replicas: "100%", Traffic: trafficOf(st), State: StepPending}
		if st.Replicas != nil {
			s.Replicas = st.Replicas.String()
		}
		if d, err := batch.DesiredUpdated(st.Replicas, replicas); err == nil {
			s.Pods = d
		}
		s.Pause = pauseOf(st.Pause, i == len(steps)-1, replicas > 0 && s.Pods >= replicas)
		switch {
		case inRelease && n == idx && (p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused || ro.Spec.Strategy.Paused):
			s.State = StepPaused
		case inRelease && n == idx:
			s.State = StepCurrent
		case (inRelease && n < idx) || (completed && n <= idx):
			s.State = StepDone
		}
		out = append(out, s)
	}
	return out
}

// pauseOf describes how a step waits once done.
func pauseOf(p rolloutsv1beta1.RolloutPause, last, releasesAll bool) string {
	switch {
	case last && releasesAll:
		return "none (last step)"
	case p.Duration == nil:
		return "until approved"
	case *p.Duration == 0:
		return "none"
	}
	return fmt.Sprintf("%ds", *p.Duration)
}

// trafficOf describes the traffic part of a step, or "" when it has none.
func trafficOf(s rolloutsv1beta1.CanaryStep) string {
	var parts []string
	if s.Traffic != nil {
		parts = append(parts, "traffic "+*s.Traffic)
	}
	if n := len(s.Matches); n > 0 {
		parts = append(parts, fmt.Sprintf("%d request match(es)", n))
	}
	if s.RequestHeaderModifier != nil {
		parts = append(parts, "header modifier")
	}
	return strings.Join(parts, ", ")
}

// waiting says what a release in progress waits for.
func waiting(ro *rolloutsv1beta1.Rollout, v View) string {
	switch {
	case !v.InRelease:
		return ""
	case v.Frozen:
		return "frozen by spec.strategy.paused"
	case v.StepState != string(rolloutsv1beta1.CanaryStepStatePaused) || v.StepIndex < 1 || v.StepIndex > v.StepCount:
		return ""
	case ro.Spec.Strategy.Steps()[v.StepIndex-1].Pause.Duration != nil:
		return fmt.Sprintf("step %d pauses for %ds", v.StepIndex, *ro.Spec.Strategy.Steps()[v.StepIndex-1].Pause.Duration)
	}
	return fmt.Sprintf("approval of step %d", v.StepIndex)
}

// buildTraffic works out the split of requests now: the current step's
// weight when the Rollout routes traffic, else the share of ready pods.
func buildTraffic(ro *rolloutsv1beta1.Rollout, v View) Traffic {
	t := Traffic{Routed: routed(ro), StablePercent: 100}
	switch {
	case !v.InRelease:
		t.Note = "no release in progress: every request goes to the current revision"
	case t.Routed && v.StepIndex >= 1 && v.StepIndex <= v.StepCount && ro.Spec.Strategy.Steps()[v.StepIndex-1].Traffic != nil:
		w := strings.TrimSuffix(strings.TrimSpace(*ro.Spec.Strategy.Steps()[v.StepIndex-1].Traffic), "%")
		if n, err := strconv.Atoi(w); err == nil && n >= 0 && n <= 100 {
			t.NewPercent, t.StablePercent = n, 100-n
		}
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

func routed(ro *rolloutsv1beta1.Rollout) bool {
	return len(ro.Spec.Strategy.TrafficRoutings()) > 0
}

// groupPods groups the live pods by the value of label: the stable
// revision first, then the new one, then any other.
func groupPods(pods []corev1.Pod, label string, p release) (groups []PodGroup, terminating int) {
	byRev := map[string]int{}
	images := map[string]map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil {
			terminating++
			continue
		}
		rev := pod.Labels[label]
		at, ok := byRev[rev]
		if !ok {
			at = len(groups)
			byRev[rev] = at
			groups = append(groups, PodGroup{Revision: rev, Role: p.RoleOf(func(v string) bool { return rev != "" && rev == v })})
			images[rev] = map[string]bool{}
		}
		groups[at].Pods++
		if podReady(pod) {
			groups[at].Ready++
		}
		for _, c := range pod.Spec.Containers {
			images[rev][c.Name+"="+c.Image] = true
		}
	}
	for i := range groups {
		for img := range images[groups[i].Revision] {
			groups[i].Images = append(groups[i].Images, img)
		}
		sort.Strings(groups[i].Images)
	}
	rank := map[string]int{"stable": 0, "current": 0, "new": 1, "other": 2}
	sort.SliceStable(groups, func(i, j int) bool {
		if rank[groups[i].Role] != rank[groups[j].Role] {
			return rank[groups[i].Role] < rank[groups[j].Role]
		}
		return groups[i].Revision < groups[j].Revision
	})
	return groups, terminating
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
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
