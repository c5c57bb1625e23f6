package transition

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nv1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func rollout(phase rolloutsv1beta1.RolloutPhase, step int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"},
		Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
			Steps: []rolloutsv1beta1.CanaryStep{{}, {}, {}}}}},
		Status: rolloutsv1beta1.RolloutStatus{Phase: phase, CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{StableRevision: "old", PodTemplateHash: "new", ObservedRolloutID: "r1",
				CurrentStepIndex: step, CurrentStepState: state, Message: "waiting for approval"},
			CanaryRevision: "newrev",
		}},
	}
}

func events(ns []nv1.Notification) string {
	var out []string
	for _, n := range ns {
		out = append(out, string(n.Event))
	}
	return strings.Join(out, ",")
}

func TestImplied(t *testing.T) {
	approved := func(ro *rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
		ro.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: `[{"revision":"oldrev","step":1,"by":"bob"},` +
			`{"revision":"newrev","step":1,"by":"alice","via":"label","at":"2026-12-01T11:00:00Z"}]`}
		return ro
	}
	succeeded := func(status corev1.ConditionStatus, reason string) func(*rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
		return func(ro *rolloutsv1beta1.Rollout) *rolloutsv1beta1.Rollout {
			ro.Status.Conditions = append(ro.Status.Conditions, rolloutsv1beta1.RolloutCondition{Type: rolloutsv1beta1.RolloutConditionSucceeded,
				Status: status, Reason: reason, Message: "the end", LastTransitionTime: metav1.NewTime(now)})
			return ro
		}
	}
	tests := []struct {
		name     string
		ro       *rolloutsv1beta1.Rollout
		failures []AnalysisFailure
		want     string
	}{
		{name: "no status", ro: &rolloutsv1beta1.Rollout{}},
		{name: "upgrading step 1", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStateUpgrade), want: "ReleaseStarted"},
		{name: "paused at step 1", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStatePaused),
			want: "ReleaseStarted,StepPaused"},
		{name: "approved, at step 2", ro: approved(rollout(rolloutsv1beta1.RolloutPhaseProgressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade)),
			want: "ReleaseStarted,Approved"},
		{name: "analysis failed", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStatePaused),
			failures: []AnalysisFailure{{Gate: "errors", Step: 1, Message: "error-rate 0.3: result < 0.05 is false"}},
			want:     "ReleaseStarted,StepPaused,AnalysisFailed"},
		{name: "aborted by an analysis", ro: func() *rolloutsv1beta1.Rollout {
			ro := rollout(rolloutsv1beta1.RolloutPhaseAborted, 1, rolloutsv1beta1.CanaryStepStatePaused)
			at := metav1.NewMicroTime(now)
			ro.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "newrev", StableRevision: "old", Step: 1, By: "MetricGate errors",
				Via: "analysis", Reason: "error-rate 0.3: result < 0.05 is false", At: &at}
			return ro
		}(), failures: []AnalysisFailure{{Gate: "errors", Step: 1, Message: "error-rate 0.3: result < 0.05 is false", Aborts: true}},
			want: "AnalysisFailed,Aborted"},
		{name: "completed", ro: succeeded(corev1.ConditionTrue, "Completed")(rollout(rolloutsv1beta1.RolloutPhaseHealthy, 3, rolloutsv1beta1.CanaryStepStateCompleted)),
			want: "Completed"},
		{name: "rolled back", ro: succeeded(corev1.ConditionFalse, "RolledBack")(rollout(rolloutsv1beta1.RolloutPhaseHealthy, 2, rolloutsv1beta1.CanaryStepStateCompleted)),
			want: "RolledBack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Implied(Observed{Rollout: tt.ro, Failures: tt.failures, Commit: "1a2b3c", Now: now})
			if events(got) != tt.want {
				t.Fatalf("Implied() = %s, want %s", events(got), tt.want)
			}
			for _, n := range got {
				if n.Key == "" || n.Namespace != "shop" || n.Rollout != "checkout" || n.Commit != "1a2b3c" || n.Revision != "newrev" {
					t.Errorf("%s: %+v", n.Event, n)
				}
			}
		})
	}
}

// The same state gives the same keys, however often it is read; another
// release, step or approval gives other keys.
func TestImplied_keysAreStable(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStatePaused)
	a := Implied(Observed{Rollout: ro, Now: now})
	b := Implied(Observed{Rollout: ro.DeepCopy(), Now: now.Add(time.Hour)})
	if a[0].Key != b[0].Key || a[1].Key != b[1].Key {
		t.Fatal("the same transitions got other keys when read later")
	}
	at2 := rollout(rolloutsv1beta1.RolloutPhaseProgressing, 2, rolloutsv1beta1.CanaryStepStatePaused)
	if c := Implied(Observed{Rollout: at2, Now: now}); c[0].Key != a[0].Key || c[1].Key == a[1].Key {
		t.Fatal("want the same ReleaseStarted key and another StepPaused key at step 2")
	}
	next := ro.DeepCopy()
	next.Status.CanaryStatus.ObservedRolloutID = "r2"
	if d := Implied(Observed{Rollout: next, Now: now}); d[0].Key == a[0].Key {
		t.Fatal("another release got the same ReleaseStarted key")
	}
}

func TestImplied_approvalsOfTheReleaseInEveryMessage(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseProgressing, 2, rolloutsv1beta1.CanaryStepStatePaused)
	ro.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: `[{"revision":"oldrev","step":1,"by":"bob"},{"revision":"newrev","step":1,"by":"alice","via":"label"}]`}
	for _, n := range Implied(Observed{Rollout: ro, Now: now}) {
		if len(n.Approvals) != 1 || n.Approvals[0].By != "alice" || n.Approvals[0].Step != 1 {
			t.Errorf("%s approvals %+v: want alice's of this revision only", n.Event, n.Approvals)
		}
	}
}

// An Aborted notification says who or what aborted the release, at which
// step, why, and where its pods and traffic went.
func TestImplied_abortedSaysWhoAtWhichStepAndWhy(t *testing.T) {
	ro := rollout(rolloutsv1beta1.RolloutPhaseAborted, 2, rolloutsv1beta1.CanaryStepStatePaused)
	at := metav1.NewMicroTime(now)
	ro.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "newrev", StableRevision: "old", Step: 2, By: "MetricGate errors",
		Via: "analysis", Reason: "error-rate 0.3: result < 0.05 is false", At: &at}
	got := Implied(Observed{Rollout: ro, Commit: "1a2b3c", Now: now})
	var ab *nv1.Notification
	for i := range got {
		if got[i].Event == nv1.EventAborted {
			ab = &got[i]
		}
	}
	want := "Release of revision newrev aborted by MetricGate errors via analysis at step 2/3 (error-rate 0.3: result < 0.05 is false): every pod and all traffic back on revision old"
	if ab == nil || ab.Message != want || ab.Step != 2 || ab.Revision != "newrev" || ab.Commit != "1a2b3c" || ab.StableRevision != "old" {
		t.Fatalf("Aborted = %+v, want message %q at step 2 of newrev with the commit", ab, want)
	}
	again := Implied(Observed{Rollout: ro.DeepCopy(), Now: now.Add(time.Hour)})
	for _, n := range again {
		if n.Event == nv1.EventAborted && n.Key != ab.Key {
			t.Fatal("the same abort got another key when read later")
		}
	}
	// A failed analysis of the release retried after it is another
	// transition.
	f := AnalysisFailure{Gate: "errors", Step: 1, Message: "x", Aborts: true, Started: now}
	k1 := Implied(Observed{Rollout: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStateUpgrade), Failures: []AnalysisFailure{f}, Now: now})
	f.Started = now.Add(time.Hour)
	k2 := Implied(Observed{Rollout: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 1, rolloutsv1beta1.CanaryStepStateUpgrade), Failures: []AnalysisFailure{f}, Now: now})
	if k1[len(k1)-1].Key == k2[len(k2)-1].Key || !strings.HasSuffix(k1[len(k1)-1].Message, "; aborting the release") {
		t.Fatalf("AnalysisFailed %+v / %+v: want another key for the retried run, and the message to say it aborts", k1, k2)
	}
}
