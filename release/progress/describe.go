package progress

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/batch"
)

// The descriptions of a release that kubectl sluice and the web view both
// show: written once here, so that the two never disagree.

// Style names how ro releases its workload, for people.
func Style(ro *rolloutsv1beta1.Rollout) string {
	switch s := ro.Spec.Strategy; {
	case s.BlueGreen != nil:
		return "blue-green"
	case s.Canary != nil && s.Canary.EnableExtraWorkloadForCanary:
		return "canary (extra canary workload)"
	case s.Canary != nil:
		return "canary in place (multi-batch)"
	}
	return "no strategy"
}

// Pause describes how a step waits once done. last and releasesAll make
// the last step that releases every pod say that it does not pause.
func Pause(p rolloutsv1beta1.RolloutPause, last, releasesAll bool) string {
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

// StepPause describes how step i (from 0) of ro waits once done, for a
// workload of replicas pods (0: unknown). A blue-green release pauses at
// its last step even when it releases every pod.
func StepPause(ro *rolloutsv1beta1.Rollout, i int, replicas int32) string {
	steps := ro.Spec.Strategy.Steps()
	st := steps[i]
	last := i == len(steps)-1 && ro.Spec.Strategy.BlueGreen == nil
	return Pause(st.Pause, last, ReleasesAll(st, replicas))
}

// ReleasesAll reports whether step s puts all of replicas pods on the new
// revision; for an unknown size (0), whether it asks for all of them.
func ReleasesAll(s rolloutsv1beta1.CanaryStep, replicas int32) bool {
	if replicas <= 0 {
		return s.Replicas == nil || s.Replicas.String() == "100%"
	}
	n, err := batch.DesiredUpdated(s.Replicas, replicas)
	return err == nil && n >= replicas
}

// StepReplicas is a step's replicas as written ("1", "50%"); a step
// without replicas releases every pod.
func StepReplicas(s rolloutsv1beta1.CanaryStep) string {
	if s.Replicas == nil {
		return "100%"
	}
	return s.Replicas.String()
}

// StepTraffic describes the traffic part of a step, or "" when it has none.
func StepTraffic(s rolloutsv1beta1.CanaryStep) string {
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

// AtStep says which step ro's release is at, "2/3", or "" when it is at
// none.
func AtStep(ro *rolloutsv1beta1.Rollout) string {
	p, ok := Of(ro)
	if !ok || p.Common.CurrentStepIndex <= 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", p.Common.CurrentStepIndex, Steps(ro))
}

// WaitKind names what a release in progress waits for.
type WaitKind int

// The things a release waits for.
const (
	// WaitNothing: the release is not waiting (or not in progress).
	WaitNothing WaitKind = iota
	// WaitFrozen: spec.strategy.paused freezes it.
	WaitFrozen
	// WaitPause: the current step pauses for Seconds, then goes on.
	WaitPause
	// WaitApproval: the current step waits for an approval.
	WaitApproval
)

// Wait is what a release in progress waits for.
type Wait struct {
	// Kind is what it waits for.
	Kind WaitKind
	// Step is the current step (from 1) and Steps how many there are.
	Step, Steps int32
	// Seconds is the pause of a WaitPause.
	Seconds int32
}

// WaitOf says what ro's release waits for; WaitNothing when it is not in
// progress (an aborted release waits for a retry or a new revision, which
// AbortOf describes).
func WaitOf(ro *rolloutsv1beta1.Rollout) Wait {
	p, _ := Of(ro)
	w := Wait{Step: p.Common.CurrentStepIndex, Steps: Steps(ro)}
	switch {
	case !InRelease(ro):
	case ro.Spec.Strategy.Paused:
		w.Kind = WaitFrozen
	case p.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused || w.Step < 1 || w.Step > w.Steps:
	case ro.Spec.Strategy.Steps()[w.Step-1].Pause.Duration != nil:
		w.Kind, w.Seconds = WaitPause, *ro.Spec.Strategy.Steps()[w.Step-1].Pause.Duration
	default:
		w.Kind = WaitApproval
	}
	return w
}

// StepState is where one step of a release is.
type StepState string

// The states of a step.
const (
	// StepDone: the step is done (or the release finished past it).
	StepDone StepState = "done"
	// StepCurrent: the release is at the step.
	StepCurrent StepState = "current"
	// StepPaused: the release is at the step, which waits (for an
	// approval, its pause, or spec.strategy.paused).
	StepPaused StepState = "paused"
	// StepPending: the release has not reached the step.
	StepPending StepState = "pending"
	// StepAborted: the release was aborted at the step.
	StepAborted StepState = "aborted"
)

// StepStates says where each step of ro's strategy is, in order.
func StepStates(ro *rolloutsv1beta1.Rollout) []StepState {
	steps := ro.Spec.Strategy.Steps()
	p, ok := Of(ro)
	idx := p.Common.CurrentStepIndex
	completed := false // every step done, not rolled back
	if ok {
		c := Condition(ro, rolloutsv1beta1.RolloutConditionSucceeded)
		completed = p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			(ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing || c == nil || c.Status != corev1.ConditionFalse)
	}
	inRelease := InRelease(ro)
	a, aborted := AbortOf(ro)
	out := make([]StepState, len(steps))
	for i := range steps {
		n := int32(i + 1) //nolint:gosec // at most 50 steps
		switch {
		case aborted && n == a.Step:
			out[i] = StepAborted
		case aborted && n < a.Step:
			out[i] = StepDone
		case inRelease && n == idx && (p.Common.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused || ro.Spec.Strategy.Paused):
			out[i] = StepPaused
		case inRelease && n == idx:
			out[i] = StepCurrent
		case (inRelease && n < idx) || (completed && n <= idx):
			out[i] = StepDone
		default:
			out[i] = StepPending
		}
	}
	return out
}

// PodGroup counts the live pods of one revision.
type PodGroup struct {
	// Revision is the value of the workload's revision label.
	Revision string
	// Role is what the revision is to the release (Progress.RoleOf).
	Role string
	// Pods and Ready count its pods, and those of them ready.
	Pods, Ready int
	// Images are its containers' images, "name=image", sorted.
	Images []string
}

// GroupPods groups the live pods by the value of their revision label:
// the stable revision first, then the new one, then any other. It also
// counts the pods terminating, which no group holds.
func (p Progress) GroupPods(pods []corev1.Pod, label string) (groups []PodGroup, terminating int) {
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
		if PodReady(pod) {
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

// PodReady reports whether p's Ready condition is True: the pods a group
// counts as ready, and those a release waits for.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
