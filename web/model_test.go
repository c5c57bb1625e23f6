package web

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

var now = time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

// rollout is a multi-batch Rollout of Deployment web with steps of the
// given replicas, each waiting for approval.
func rollout(phase rolloutsv1beta1.RolloutPhase, cs *rolloutsv1beta1.CanaryStatus, replicas ...string) *rolloutsv1beta1.Rollout {
	var steps []rolloutsv1beta1.CanaryStep
	for _, r := range replicas {
		v := intstr.Parse(r)
		steps = append(steps, rolloutsv1beta1.CanaryStep{Replicas: &v})
	}
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
		Status: rolloutsv1beta1.RolloutStatus{Phase: phase, CanaryStatus: cs},
	}
}

func canary(step int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.CanaryStatus {
	return &rolloutsv1beta1.CanaryStatus{
		CommonStatus:   rolloutsv1beta1.CommonStatus{StableRevision: "s1", PodTemplateHash: "h2", CurrentStepIndex: step, CurrentStepState: state},
		CanaryRevision: "r2",
	}
}

func states(v View) []StepState {
	out := make([]StepState, 0, len(v.Steps))
	for _, s := range v.Steps {
		out = append(out, s.State)
	}
	return out
}

func TestBuild_stepStatesFollowTheRelease(t *testing.T) {
	const (
		done, cur, paused, pending = StepDone, StepCurrent, StepPaused, StepPending
	)
	failed := rollout(rolloutsv1beta1.RolloutPhaseHealthy, canary(3, rolloutsv1beta1.CanaryStepStateCompleted), "1", "50%", "100%")
	failed.Status.Conditions = []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionSucceeded, Status: corev1.ConditionFalse}}
	frozen := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(2, rolloutsv1beta1.CanaryStepStateUpgrade), "1", "50%", "100%")
	frozen.Spec.Strategy.Paused = true
	aborted := rollout(rolloutsv1beta1.RolloutPhaseAborted, canary(2, rolloutsv1beta1.CanaryStepStatePaused), "1", "50%", "100%")
	aborted.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "r2", StableRevision: "s1", Step: 2, By: "ops", Via: "github-label", Held: true}
	tests := []struct {
		name        string
		ro          *rolloutsv1beta1.Rollout
		want        []StepState
		wantWaiting string
		wantIn      bool
	}{
		{name: "never released", ro: rollout(rolloutsv1beta1.RolloutPhaseHealthy, nil, "1", "50%", "100%"), want: []StepState{pending, pending, pending}},
		{name: "step 1 upgrading", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStateUpgrade), "1", "50%", "100%"),
			want: []StepState{cur, pending, pending}, wantIn: true},
		{name: "step 1 paused for approval", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "50%", "100%"),
			want: []StepState{paused, pending, pending}, wantWaiting: "approval of step 1", wantIn: true},
		{name: "step 2 ready", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(2, rolloutsv1beta1.CanaryStepStateReady), "1", "50%", "100%"),
			want: []StepState{done, cur, pending}, wantIn: true},
		{name: "frozen mid step", ro: frozen, want: []StepState{done, paused, pending}, wantWaiting: "frozen by spec.strategy.paused", wantIn: true},
		{name: "finished", ro: rollout(rolloutsv1beta1.RolloutPhaseHealthy, canary(3, rolloutsv1beta1.CanaryStepStateCompleted), "1", "50%", "100%"),
			want: []StepState{done, done, done}},
		{name: "rolled back", ro: failed, want: []StepState{pending, pending, pending}},
		{name: "aborted at step 2", ro: aborted, want: []StepState{done, StepAborted, pending}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Build(Input{Rollout: tt.ro, Now: now})
			if got := states(v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("step states = %v, want %v", got, tt.want)
			}
			if v.Waiting != tt.wantWaiting || v.InRelease != tt.wantIn {
				t.Errorf("waiting %q inRelease %v, want %q %v", v.Waiting, v.InRelease, tt.wantWaiting, tt.wantIn)
			}
		})
	}
}

func TestBuild_stepPodsAndPauses(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "50%", "100%")
	d := int32(30)
	ro.Spec.Strategy.Canary.Steps[1].Pause.Duration = &d
	v := Build(Input{Rollout: ro, Workload: &workload.Status{Replicas: 4}, Now: now})
	want := []Step{
		{Number: 1, Replicas: "1", Pods: 1, Pause: "until approved", State: StepPaused},
		{Number: 2, Replicas: "50%", Pods: 2, Pause: "30s", State: StepPending},
		{Number: 3, Replicas: "100%", Pods: 4, Pause: "none (last step)", State: StepPending},
	}
	if !reflect.DeepEqual(v.Steps, want) {
		t.Fatalf("steps = %+v\nwant %+v", v.Steps, want)
	}
}

func pod(rev, image string, ready, terminating bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pod-template-hash": rev}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if terminating {
		p.DeletionTimestamp = &metav1.Time{Time: now}
	}
	return p
}

func TestBuild_podsPerRevision(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%")
	ws := &workload.Status{Replicas: 4, UpdatedReplicas: 1, UpdatedReadyReplicas: 1, RevisionLabel: "pod-template-hash"}
	tests := []struct {
		name     string
		pods     []corev1.Pod
		want     []PodGroup
		wantTerm int
	}{
		{name: "none"},
		{
			name: "stable first, then new, then other; terminating counted apart",
			pods: []corev1.Pod{pod("h2", "app:v2", true, false), pod("x9", "app:v0", false, false), pod("s1", "app:v1", true, false),
				pod("s1", "app:v1", false, false), pod("s1", "app:v1", true, true)},
			want: []PodGroup{
				{Revision: "s1", Role: "stable", Pods: 2, Ready: 1, Images: []string{"app=app:v1"}},
				{Revision: "h2", Role: "new", Pods: 1, Ready: 1, Images: []string{"app=app:v2"}},
				{Revision: "x9", Role: "other", Pods: 1, Ready: 0, Images: []string{"app=app:v0"}},
			},
			wantTerm: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Build(Input{Rollout: ro, Workload: ws, Pods: tt.pods, Now: now})
			if !reflect.DeepEqual(v.Pods, tt.want) || v.Terminating != tt.wantTerm {
				t.Fatalf("pods = %+v (%d terminating)\nwant %+v (%d)", v.Pods, v.Terminating, tt.want, tt.wantTerm)
			}
		})
	}
}

func TestBuild_trafficSplit(t *testing.T) {
	routedRO := func(traffic *string) *rolloutsv1beta1.Rollout {
		ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%")
		ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{Service: "web"}}
		ro.Spec.Strategy.Canary.Steps[0].Traffic = traffic
		return ro
	}
	tests := []struct {
		name          string
		ro            *rolloutsv1beta1.Rollout
		ws            *workload.Status
		wantNew, want int
		wantRouted    bool
	}{
		{name: "no release", ro: rollout(rolloutsv1beta1.RolloutPhaseHealthy, nil, "1"), ws: &workload.Status{Replicas: 4}, wantNew: 0, want: 100},
		{name: "routed weight", ro: routedRO(ptr("20%")), ws: &workload.Status{Replicas: 4}, wantNew: 20, want: 80, wantRouted: true},
		{name: "no weight: share of ready pods", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%"),
			ws: &workload.Status{Replicas: 4, UpdatedReadyReplicas: 1}, wantNew: 25, want: 75},
		{name: "workload unknown", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%"), wantNew: 0, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Build(Input{Rollout: tt.ro, Workload: tt.ws, Now: now}).Traffic
			if tr.NewPercent != tt.wantNew || tr.StablePercent != tt.want || tr.Routed != tt.wantRouted || tr.Note == "" {
				t.Fatalf("traffic = %+v, want new %d stable %d routed %v", tr, tt.wantNew, tt.want, tt.wantRouted)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestBuild_approvalsFromTheRecord(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(2, rolloutsv1beta1.CanaryStepStatePaused), "1", "50%", "100%")
	tests := []struct {
		name   string
		record string
		want   []Approval
	}{
		{name: "none", want: []Approval{}},
		{name: "damaged", record: "{not json", want: nil},
		{
			name:   "two releases",
			record: `[{"revision":"r1","step":1,"by":"jane","via":"annotation","at":"2026-12-01T02:00:00Z"},{"revision":"r2","step":1,"by":"kubectl-kruise","via":"status","at":"2026-12-01T02:59:30Z"}]`,
			want: []Approval{
				{Revision: "r1", Step: 1, By: "jane", Via: "annotation", At: "2026-12-01T02:00:00Z", Age: "60m"},
				{Revision: "r2", Step: 1, By: "kubectl-kruise", Via: "status", At: "2026-12-01T02:59:30Z", Age: "30s", Current: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := ro.DeepCopy()
			ro.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: tt.record}
			if got := Build(Input{Rollout: ro, Now: now}).Approvals; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("approvals = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestGitOf_readsTheAnnotationsRolloutFirst(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name              string
		workload, rollout map[string]string
		want              Git
	}{
		{name: "none", want: Git{}},
		{name: "flux revision on the workload", workload: map[string]string{RevisionAnnotation: "main@sha1:" + sha},
			want: Git{Revision: "main@sha1:" + sha, Ref: "main", Commit: sha}},
		{name: "bare upper-case sha", workload: map[string]string{RevisionAnnotation: "0123456789ABCDEF0123456789ABCDEF01234567"},
			want: Git{Revision: "0123456789ABCDEF0123456789ABCDEF01234567", Commit: sha}},
		{name: "not a sha keeps the text only", workload: map[string]string{RevisionAnnotation: "v1.2.3"}, want: Git{Revision: "v1.2.3"}},
		{
			name:     "rollout wins; only http(s) links",
			workload: map[string]string{RevisionAnnotation: "old", PullRequestAnnotation: "#1"},
			rollout: map[string]string{RevisionAnnotation: sha, CommitURLAnnotation: "javascript:alert(1)",
				PullRequestAnnotation: "#42", PullRequestURLAnnotation: "https://git.example/shop/pull/42"},
			want: Git{Revision: sha, Commit: sha, PullRequest: "#42", PullRequestURL: "https://git.example/shop/pull/42"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gitOf(tt.workload, tt.rollout); got != tt.want {
				t.Fatalf("gitOf = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestBuild_eventsTimelineOldestFirstAndBounded(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1")
	var events []eventsv1.Event
	for i := MaxEvents + 2; i >= 1; i-- { // newest first, as a list may come
		events = append(events, eventsv1.Event{
			EventTime: metav1.MicroTime{Time: now.Add(-time.Duration(i) * time.Minute)},
			Type:      corev1.EventTypeNormal, Reason: "R", Note: "line\n  two",
		})
	}
	got := Build(Input{Rollout: ro, Events: events, Now: now}).Events
	if len(got) != MaxEvents {
		t.Fatalf("%d events, want %d", len(got), MaxEvents)
	}
	if got[0].Age != "15m" || got[len(got)-1].Age != "60s" || got[0].Message != "line two" || got[0].Count != 1 {
		t.Fatalf("timeline = first %+v last %+v", got[0], got[len(got)-1])
	}
}

func TestSummaries_listTheRolloutsWithTheirStep(t *testing.T) {
	a := rollout(rolloutsv1beta1.RolloutPhaseProgressing, canary(1, rolloutsv1beta1.CanaryStepStatePaused), "1", "100%")
	b := rollout(rolloutsv1beta1.RolloutPhaseHealthy, nil, "1")
	b.Namespace, b.Name = "a-ns", "api server"
	got := Summaries([]rolloutsv1beta1.Rollout{*a, *b})
	want := []Summary{
		{Namespace: "a-ns", Name: "api server", Phase: "Healthy", Step: "-", Link: "/rollouts/a-ns/api%20server"},
		{Namespace: "shop", Name: "web", Phase: "Progressing", Step: "1/2", State: "StepPaused", Revision: "r2", Link: "/rollouts/shop/web"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summaries = %+v\nwant %+v", got, want)
	}
}

func TestBuild_abortedSaysWhoAndWhatToDo(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseAborted, canary(2, rolloutsv1beta1.CanaryStepStatePaused), "1", "50%", "100%")
	at := metav1.NewMicroTime(now.Add(-5 * time.Minute))
	ro.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "r2", StableRevision: "s1", Step: 2, By: "ops", Via: "github-label", At: &at,
		Reason: "5xx", Held: true}
	v := Build(Input{Rollout: ro, Now: now})
	a := v.Aborted
	if a == nil || a.Step != 2 || a.Who != "ops via github-label" || a.Reason != "5xx" || a.Age != "5m" ||
		a.State != "every pod and all traffic on revision s1" || len(a.Advice) == 0 || a.Advice[len(a.Advice)-1] != "  kubectl sluice retry web -n shop" {
		t.Fatalf("aborted %+v", a)
	}
	if v.InRelease {
		t.Fatal("an aborted release shows as in progress")
	}
}
