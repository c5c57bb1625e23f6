package view

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/revisions"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func step(replicas string, pause *int32) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	return rolloutsv1beta1.CanaryStep{Replicas: &r, Pause: rolloutsv1beta1.RolloutPause{Duration: pause}}
}

// releasing is a canary Rollout shop/web with steps 1 / 50% / 100%, at
// step idx in state, releasing revision new (pods new-h) over stable.
func releasing(idx int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	since := metav1.NewTime(now.Add(-90 * time.Second))
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour))},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				step("1", nil), step("50%", nil), step("100%", nil),
			}}},
		},
		Status: rolloutsv1beta1.RolloutStatus{
			Phase:   rolloutsv1beta1.RolloutPhaseProgressing,
			Message: "Step 2/3 paused, waiting for approval",
			CanaryStatus: &rolloutsv1beta1.CanaryStatus{
				CommonStatus: rolloutsv1beta1.CommonStatus{
					CurrentStepIndex: idx, CurrentStepState: state, StableRevision: "stable", PodTemplateHash: "new-h", LastUpdateTime: &since,
				},
				CanaryRevision: "new", CanaryReplicas: 2, CanaryReadyReplicas: 2,
			},
			CurrentStepIndex: idx, CurrentStepState: state,
		},
	}
}

func blueGreen(ro *rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{Steps: ro.Spec.Strategy.Steps()}}
	cs := ro.Status.CanaryStatus
	ro.Status.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{CommonStatus: cs.CommonStatus, UpdatedRevision: cs.CanaryRevision,
		UpdatedReplicas: cs.CanaryReplicas, UpdatedReadyReplicas: cs.CanaryReadyReplicas}
	ro.Status.CanaryStatus = nil
	return ro
}

func deploymentStatus() *workload.Status {
	return &workload.Status{Replicas: 4, UpdatedReplicas: 2, UpdatedReadyReplicas: 2, RevisionLabel: "pod-template-hash",
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

func TestRowOf(t *testing.T) {
	paused := releasing(2, rolloutsv1beta1.CanaryStepStatePaused)
	paused.Spec.Strategy.Paused = true
	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		ws   *workload.Status
		want Row
	}{
		{
			name: "canary at a paused step", ro: releasing(2, rolloutsv1beta1.CanaryStepStatePaused), ws: deploymentStatus(),
			want: Row{Namespace: "shop", Name: "web", Phase: "Progressing", Step: "2/3", State: "StepPaused", Workload: "Deployment/web",
				Revision: "new", Ready: "2/4", Age: "3h", Message: "Step 2/3 paused, waiting for approval"},
		},
		{
			name: "blue-green, workload unknown", ro: blueGreen(releasing(1, rolloutsv1beta1.CanaryStepStateUpgrade)),
			want: Row{Namespace: "shop", Name: "web", Phase: "Progressing", Step: "1/3", State: "StepUpgrade", Workload: "Deployment/web",
				Revision: "new", Ready: "2/-", Age: "3h", Message: "Step 2/3 paused, waiting for approval"},
		},
		{
			name: "frozen by spec.strategy.paused", ro: paused, ws: deploymentStatus(),
			want: Row{Namespace: "shop", Name: "web", Phase: "Progressing", Step: "2/3", State: "StepPaused (paused)", Workload: "Deployment/web",
				Revision: "new", Ready: "2/4", Age: "3h", Message: "Step 2/3 paused, waiting for approval"},
		},
		{
			name: "never saw its workload", ro: &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"},
				Spec: rolloutsv1beta1.RolloutSpec{WorkloadRef: rolloutsv1beta1.ObjectRef{Kind: "StatefulSet", Name: "db"}}},
			want: Row{Namespace: "shop", Name: "db", Phase: "-", Step: "-", State: "-", Workload: "StatefulSet/db", Revision: "-", Ready: "-", Age: "-", Message: "-"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RowOf(tt.ro, tt.ws, now); got != tt.want {
				t.Fatalf("RowOf =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	rows := []Row{
		{Namespace: "shop", Name: "web", Phase: "Progressing", Step: "2/3", State: "StepPaused", Workload: "Deployment/web", Revision: "new", Ready: "2/4", Age: "3h", Message: "Step 2/3\npaused"},
		{Namespace: "db", Name: "postgres", Phase: "Healthy", Step: "3/3", State: "Completed", Workload: "StatefulSet/postgres", Revision: "r7", Ready: "3/3", Age: "12d", Message: "done"},
	}
	tests := []struct {
		name string
		c    Columns
		want string
	}{
		{name: "namespace", c: Columns{}, want: `
NAME       PHASE         STEP   STATE        WORKLOAD               REVISION   READY   AGE
web        Progressing   2/3    StepPaused   Deployment/web         new        2/4     3h
postgres   Healthy       3/3    Completed    StatefulSet/postgres   r7         3/3     12d
`},
		{name: "all namespaces, wide", c: Columns{Namespace: true, Wide: true}, want: `
NAMESPACE   NAME       PHASE         STEP   STATE        WORKLOAD               REVISION   READY   AGE   MESSAGE
shop        web        Progressing   2/3    StepPaused   Deployment/web         new        2/4     3h    Step 2/3 paused
db          postgres   Healthy       3/3    Completed    StatefulSet/postgres   r7         3/3     12d   done
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, rows, tt.c); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want[1:] {
				t.Fatalf("table =\n%s\nwant\n%s", got, tt.want[1:])
			}
		})
	}
}

func pod(name, rev, image string, ready bool) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web", "pod-template-hash": rev}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func event(reason, note string, ago time.Duration) eventsv1.Event {
	return eventsv1.Event{Type: "Normal", Reason: reason, Note: note, EventTime: metav1.NewMicroTime(now.Add(-ago))}
}

func TestStatus_pausedStep_marksItAndGivesTheApproveCommand(t *testing.T) {
	terminating := pod("web-old-4", "stable", "web:v1", true)
	terminating.DeletionTimestamp = ptr(metav1.NewTime(now))
	snap := Snapshot{
		Rollout:  releasing(2, rolloutsv1beta1.CanaryStepStatePaused),
		Workload: deploymentStatus(),
		Pods: []corev1.Pod{
			pod("web-new-1", "new-h", "web:v2", true), pod("web-old-1", "stable", "web:v1", true),
			pod("web-new-2", "new-h", "web:v2", false), pod("web-old-2", "stable", "web:v1", true), terminating,
		},
		Events: []eventsv1.Event{event("StepPaused", "Step 2/3 paused, waiting for approval", time.Minute), event("Progressing", "Release started", time.Hour)},
		Now:    now,
	}
	raw, _ := approval.Append("", approval.Approval{Revision: "new", Step: 1, By: "jane", Via: "annotation", At: ptr(now.Add(-2 * time.Minute))}, time.Time{})
	raw, _ = approval.Append(raw, approval.Approval{Revision: "older", Step: 1, By: "joe", Via: "status", At: ptr(now.Add(-48 * time.Hour))}, time.Time{})
	snap.Rollout.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: raw}
	var b bytes.Buffer
	if err := Status(&b, snap); err != nil {
		t.Fatal(err)
	}
	want := `
Rollout:    shop/web
Workload:   Deployment/web (apps/v1), canary in place (multi-batch)
Phase:      Progressing, step 2/3 StepPaused
Message:    Step 2/3 paused, waiting for approval
Revisions:  stable stable, new new
Updated:    2/4 pods on the new revision, 2 ready

Steps:
  done  1  replicas 1     pause until approved
  =>    2  replicas 50%   pause until approved  StepPaused for 90s
        3  replicas 100%  pause none (last step)

Pods (selector app=web, revision label pod-template-hash):
  REVISION  ROLE    PODS  READY  IMAGES
  stable    stable  2     2      app=web:v1
  new-h     new     2     1      app=web:v2
  and 1 pod(s) terminating

Approval needed:
  Step 2/3 of revision new waits for approval. Approve it with:
    kubectl sluice approve web -n shop
  Approve every remaining step with:
    kubectl sluice promote-full web -n shop

Approvals of revision new:
  step 1 by jane via annotation, 2m ago

Events:
  AGE  TYPE    REASON       MESSAGE
  60m  Normal  Progressing  Release started
  60s  Normal  StepPaused   Step 2/3 paused, waiting for approval
`
	if got := b.String(); got != want[1:] {
		t.Fatalf("status page =\n%s\nwant\n%s", got, want[1:])
	}
}

// page renders the status of snap.
func page(t *testing.T, snap Snapshot) string {
	t.Helper()
	if snap.Now.IsZero() {
		snap.Now = now
	}
	var b bytes.Buffer
	if err := Status(&b, snap); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestStatus_sections(t *testing.T) {
	frozen := releasing(1, rolloutsv1beta1.CanaryStepStatePaused)
	frozen.Spec.Strategy.Paused = true
	timed := releasing(1, rolloutsv1beta1.CanaryStepStatePaused)
	timed.Spec.Strategy.Canary.Steps[0].Pause.Duration = ptr[int32](300)
	done := releasing(3, rolloutsv1beta1.CanaryStepStateCompleted)
	done.Status.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	done.Status.CanaryStatus.StableRevision = "new-h"
	rolledBack := releasing(1, rolloutsv1beta1.CanaryStepStateCompleted)
	rolledBack.Status.Phase = rolloutsv1beta1.RolloutPhaseHealthy
	rolledBack.Status.Conditions = []rolloutsv1beta1.RolloutCondition{
		{Type: rolloutsv1beta1.RolloutConditionSucceeded, Status: corev1.ConditionFalse, Reason: "RolledBack", Message: "Rolled back to revision stable"},
	}
	stalled := releasing(2, rolloutsv1beta1.CanaryStepStateUpgrade)
	stalled.Status.Conditions = []rolloutsv1beta1.RolloutCondition{
		{Type: rolloutsv1beta1.RolloutConditionStalled, Status: corev1.ConditionTrue, Reason: "ProgressDeadlineExceeded", Message: "Step 2/3: 1/2 new pods ready after 10m0s; not ready: web-x"},
		{Type: rolloutsv1beta1.RolloutConditionSupported, Status: corev1.ConditionFalse, Reason: "PartlySupported", Message: "spec.strategy.canary.steps[0].traffic"},
		{Type: rolloutsv1beta1.RolloutConditionProgressing, Status: corev1.ConditionTrue, Reason: "InRolling"},
	}
	stalled.Spec.Strategy.Canary.Steps[0].Traffic = ptr("20%")
	var many []eventsv1.Event
	for i := range 10 {
		many = append(many, event("Reason"+fmt.Sprint(i), "note", time.Duration(10-i)*time.Minute))
	}
	tests := []struct {
		name        string
		snap        Snapshot
		want, avoid []string
	}{
		{
			name: "frozen by spec.strategy.paused", snap: Snapshot{Rollout: frozen},
			want:  []string{"Paused:    yes, spec.strategy.paused; resume with kubectl sluice resume web -n shop", "Resume it with:\n    kubectl sluice resume web -n shop"},
			avoid: []string{"Approval needed", "kubectl sluice approve"},
		},
		{
			name: "timed pause", snap: Snapshot{Rollout: timed},
			want:  []string{"=>    1  replicas 1", "pause 300s", "Step 1/3 pauses for 300s and then goes on by itself."},
			avoid: []string{"Approval needed"},
		},
		{
			name: "completed release", snap: Snapshot{Rollout: done, Workload: deploymentStatus(), Pods: []corev1.Pod{pod("a", "new-h", "web:v2", true)}},
			want:  []string{"  done  1", "  done  2", "  done  3", "new-h     current  1     1"},
			avoid: []string{CurrentMarker, "Approval needed"},
		},
		{
			name: "rolled back", snap: Snapshot{Rollout: rolledBack},
			want:  []string{"Conditions:\n  Succeeded=False (RolledBack): Rolled back to revision stable"},
			avoid: []string{"done", CurrentMarker, "Approval needed"},
		},
		{
			name: "stalled and partly supported, a step with traffic", snap: Snapshot{Rollout: stalled},
			want: []string{
				"Conditions:\n  Stalled=True (ProgressDeadlineExceeded): Step 2/3: 1/2 new pods ready after 10m0s; not ready: web-x\n  Supported=False (PartlySupported): spec.strategy.canary.steps[0].traffic\n",
				"done 1 replicas 1 pause until approved traffic 20%", "=> 2 replicas 50% pause until approved - StepUpgrade for 90s",
			},
			avoid: []string{"Progressing=", "Approval needed"},
		},
		{
			name: "workload not readable", snap: Snapshot{Rollout: stalled, WorkloadErr: "Deployment shop/web does not exist", Problems: []string{"listing events: forbidden"}},
			want:  []string{"Updated:   unknown: Deployment shop/web does not exist", "Could not read:\n  listing events: forbidden"},
			avoid: []string{"Pods ("},
		},
		{
			name: "the latest events only", snap: Snapshot{Rollout: stalled, Events: many},
			want:  []string{"Reason2", "Reason9"},
			avoid: []string{"Reason0 ", "Reason1 "},
		},
		{
			name: "blue-green", snap: Snapshot{Rollout: blueGreen(releasing(1, rolloutsv1beta1.CanaryStepStatePaused))},
			want: []string{"Deployment/web (apps/v1), blue-green", "=>    1", "kubectl sluice approve web -n shop", "Revisions: stable stable, new new"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := page(t, tt.snap)
			flat := squeeze(got)
			for _, w := range tt.want {
				if !strings.Contains(flat, squeeze(w)) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(flat, squeeze(a)) {
					t.Errorf("page has %q", a)
				}
			}
			if t.Failed() {
				t.Logf("page:\n%s", got)
			}
		})
	}
}

// squeeze collapses the runs of spaces that align columns, so that
// assertions do not depend on column widths.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

func TestHistoryOf_newestLast(t *testing.T) {
	ro := releasing(2, rolloutsv1beta1.CanaryStepStatePaused)
	raw, _ := approval.Append("", approval.Approval{Revision: "new", Step: 1, By: "sluice-admin", Via: "annotation", At: ptr(now.Add(-5 * time.Minute))}, time.Time{})
	ro.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: raw}
	v1, v2 := corev1.PodTemplateSpec{}, corev1.PodTemplateSpec{}
	v1.Spec.Containers = []corev1.Container{{Name: "app", Image: "web:v1"}}
	v2.Spec.Containers = []corev1.Container{{Name: "app", Image: "web:v2"}}
	revs := []revisions.Revision{
		{Kind: "ReplicaSet", Name: "web-stable", Hash: "stable", Number: 1, Created: now.Add(-72 * time.Hour), Template: &v1},
		{Kind: "ReplicaSet", Name: "web-new-h", Hash: "new-h", Number: 2, Created: now.Add(-10 * time.Minute), Template: &v2},
	}
	repeated := event("StepPaused", "Step 1/3 paused", 8*time.Minute)
	repeated.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))}
	events := []eventsv1.Event{
		event("Approved", "Step 1 approved", 5*time.Minute), // the record has it
		repeated,
		event("Progressing", "Release of new started", 10*time.Minute),
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, HistoryOf(ro, revs, events)); err != nil {
		t.Fatal(err)
	}
	want := `
TIME                  KIND      WHAT
2026-11-27T12:00:00Z  revision  ReplicaSet web-stable #1 app=web:v1 (stable)
2026-11-30T11:50:00Z  revision  ReplicaSet web-new-h #2 app=web:v2 (new)
2026-11-30T11:50:00Z  event     Normal Progressing: Release of new started
2026-11-30T11:52:00Z  event     Normal StepPaused: Step 1/3 paused (x2, last 2026-11-30T11:59:00Z)
2026-11-30T11:55:00Z  approval  step 1 of revision new approved by sluice-admin via annotation
`
	if got := b.String(); got != want[1:] {
		t.Fatalf("history =\n%s\nwant\n%s", got, want[1:])
	}
}
