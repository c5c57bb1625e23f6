package approve

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

func ptr[T any](v T) *T { return &v }

// rollout is a canary Rollout shop/web with four steps (the third pauses
// for 60s), at step idx in state, releasing revision r2.
func rollout(phase rolloutsv1beta1.RolloutPhase, idx int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	one, half, most, all := intstr.FromInt32(1), intstr.FromString("50%"), intstr.FromString("75%"), intstr.FromString("100%")
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &one},
				{Replicas: &half},
				{Replicas: &most, Pause: rolloutsv1beta1.RolloutPause{Duration: ptr[int32](60)}},
				{Replicas: &all},
			}}},
		},
		Status: rolloutsv1beta1.RolloutStatus{
			Phase: phase,
			CanaryStatus: &rolloutsv1beta1.CanaryStatus{
				CommonStatus:   rolloutsv1beta1.CommonStatus{CurrentStepIndex: idx, CurrentStepState: state, StableRevision: "r1"},
				CanaryRevision: "r2",
			},
		},
	}
}

func TestStep(t *testing.T) {
	progressing := rolloutsv1beta1.RolloutPhaseProgressing
	paused := rolloutsv1beta1.CanaryStepStatePaused
	tests := []struct {
		name    string
		ro      *rolloutsv1beta1.Rollout
		upTo    int32
		want    Plan
		wantErr string
	}{
		{name: "current paused step", ro: rollout(progressing, 1, paused), want: Plan{From: 1, Step: 1, Steps: 4, Revision: "r2"}},
		{name: "up to a later step", ro: rollout(progressing, 1, paused), upTo: 4, want: Plan{From: 1, Step: 4, Steps: 4, Revision: "r2"}},
		{name: "up to the current step", ro: rollout(progressing, 2, paused), upTo: 2, want: Plan{From: 2, Step: 2, Steps: 4, Revision: "r2"}},
		{
			name: "upgrading", ro: rollout(progressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade),
			wantErr: "rollout shop/web is at step 2 in state StepUpgrade, not paused: nothing to approve yet; watch it with kubectl sluice status web -n shop --watch",
		},
		{
			name: "no release", ro: rollout(rolloutsv1beta1.RolloutPhaseHealthy, 4, rolloutsv1beta1.CanaryStepStateCompleted),
			wantErr: "rollout shop/web has no release in progress (phase Healthy, state Completed): nothing to approve; a release starts when the pod template of Deployment web changes",
		},
		{
			name: "timed pause", ro: rollout(progressing, 3, paused),
			wantErr: "step 3 of rollout shop/web pauses for 60s and then goes on by itself",
		},
		{
			name: "step already done", ro: rollout(progressing, 2, paused), upTo: 1,
			wantErr: "step 1 of rollout shop/web is already done (the release is at step 2): give --step 2 or more",
		},
		{name: "negative step", ro: rollout(progressing, 1, paused), upTo: -1, wantErr: "--step -1 is not a step: steps count from 1"},
		{
			name: "step beyond the last", ro: rollout(progressing, 1, paused), upTo: 5,
			wantErr: "rollout shop/web has 4 steps: --step 5 is not one of them; approve them all with kubectl sluice promote-full web -n shop",
		},
		{
			name: "strategy paused", ro: func() *rolloutsv1beta1.Rollout {
				ro := rollout(progressing, 1, paused)
				ro.Spec.Strategy.Paused = true
				return ro
			}(),
			wantErr: "resume it first with kubectl sluice resume web -n shop",
		},
		{
			name: "aborted", ro: func() *rolloutsv1beta1.Rollout {
				ro := rollout(rolloutsv1beta1.RolloutPhaseAborted, 2, paused)
				ro.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "r2", StableRevision: "r1", Step: 2, By: "ops", Via: "github-label"}
				return ro
			}(),
			wantErr: "the release of revision r2 by rollout shop/web was rolled back by ops via github-label at step 2: approvals are refused; " +
				"revert the commit in Git, or push a new one; to release it again: kubectl sluice retry web -n shop",
		},
		{
			name: "blue-green", ro: func() *rolloutsv1beta1.Rollout {
				ro := rollout(progressing, 1, paused)
				ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{Steps: ro.Spec.Strategy.Steps()}}
				ro.Status.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{CommonStatus: ro.Status.CanaryStatus.CommonStatus, UpdatedRevision: "b2"}
				ro.Status.CanaryStatus = nil
				return ro
			}(),
			want: Plan{From: 1, Step: 1, Steps: 4, Revision: "b2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Step(tt.ro, tt.upTo)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Step error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Step = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestFull_approvesEveryStepInAnyStateOfARelease(t *testing.T) {
	got, err := Full(rollout(rolloutsv1beta1.RolloutPhaseProgressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade))
	want := Plan{From: 2, Step: 4, Steps: 4, Revision: "r2"}
	if err != nil || got != want {
		t.Fatalf("Full = %+v, %v; want %+v", got, err, want)
	}
	if got.Value() != "step=4,revision=r2" {
		t.Fatalf("Value = %q", got.Value())
	}
	if _, err := approval.Parse(got.Value()); err != nil {
		t.Fatalf("the value does not parse as an approval: %v", err)
	}
	if _, err := Full(rollout(rolloutsv1beta1.RolloutPhaseHealthy, 4, rolloutsv1beta1.CanaryStepStateCompleted)); err == nil {
		t.Fatal("Full of a Rollout without a release: no error")
	}
}

func record(rev string, step int32, by string, at time.Time) approval.Approval {
	return approval.Approval{Revision: rev, Step: step, By: by, Via: "annotation", At: &at}
}

func TestAdded(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old := record("r2", 1, "jane", t0)
	again := record("r2", 1, "jane", t0.Add(time.Hour)) // the same step of the same revision, approved again later
	tests := []struct {
		name          string
		before, after []approval.Approval
		want          int
	}{
		{name: "nothing new", before: []approval.Approval{old}, after: []approval.Approval{old}, want: 0},
		{name: "one appended", before: []approval.Approval{old}, after: []approval.Approval{old, again}, want: 1},
		{name: "oldest fell off", before: []approval.Approval{old, again}, after: []approval.Approval{again, record("r2", 2, "joe", t0)}, want: 1},
		{name: "record was empty", after: []approval.Approval{old}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Added(tt.before, tt.after); len(got) != tt.want {
				t.Fatalf("Added = %+v, want %d records", got, tt.want)
			}
		})
	}
}

// withRecords sets ro's record of approvals.
func withRecords(ro *rolloutsv1beta1.Rollout, records ...approval.Approval) *rolloutsv1beta1.Rollout {
	raw := ""
	for _, r := range records {
		raw, _ = approval.Append(raw, r, *r.At) // each given once its step began
	}
	ro.Annotations = map[string]string{rolloutsv1beta1.ApprovalsAnnotation: raw}
	return ro
}

func TestApproved(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plan := Plan{From: 1, Step: 1, Steps: 4, Revision: "r2"}
	earlier := record("r2", 1, "jane", t0) // an approval of the same revision in an earlier release
	progressing, paused := rolloutsv1beta1.RolloutPhaseProgressing, rolloutsv1beta1.CanaryStepStatePaused
	tests := []struct {
		name        string
		ro          *rolloutsv1beta1.Rollout
		wantDone    bool
		wantApplied int
		wantMovedOn string
	}{
		{name: "not applied yet", ro: withRecords(rollout(progressing, 1, paused), earlier)},
		{
			name: "applied", ro: withRecords(rollout(progressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade), earlier, record("r2", 1, "sluice-admin", t0.Add(time.Hour))),
			wantDone: true, wantApplied: 1,
		},
		{
			name: "moved on without it", ro: withRecords(rollout(progressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade), earlier),
			wantDone: true, wantMovedOn: "it is at step 2 in state StepUpgrade",
		},
		{
			name: "another revision", ro: func() *rolloutsv1beta1.Rollout {
				ro := withRecords(rollout(progressing, 1, paused), earlier)
				ro.Status.CanaryStatus.CanaryRevision = "r3"
				return ro
			}(),
			wantDone: true, wantMovedOn: "it now releases revision r3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Approved(tt.ro, plan, []approval.Approval{earlier})
			if got.Done != tt.wantDone || len(got.Applied) != tt.wantApplied || got.MovedOn != tt.wantMovedOn {
				t.Fatalf("Approved = %+v; want done %v, %d applied, moved on %q", got, tt.wantDone, tt.wantApplied, tt.wantMovedOn)
			}
		})
	}
}

func TestCompleted(t *testing.T) {
	plan := Plan{From: 1, Step: 4, Steps: 4, Revision: "r2"}
	tests := []struct {
		name        string
		ro          *rolloutsv1beta1.Rollout
		wantDone    bool
		wantMovedOn string
	}{
		{name: "going through the steps", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 2, rolloutsv1beta1.CanaryStepStateUpgrade)},
		{name: "finishing", ro: rollout(rolloutsv1beta1.RolloutPhaseProgressing, 4, rolloutsv1beta1.CanaryStepStateCompleted)},
		{name: "completed", ro: rollout(rolloutsv1beta1.RolloutPhaseHealthy, 4, rolloutsv1beta1.CanaryStepStateCompleted), wantDone: true},
		{
			name: "rolled back", ro: func() *rolloutsv1beta1.Rollout {
				ro := rollout(rolloutsv1beta1.RolloutPhaseHealthy, 1, rolloutsv1beta1.CanaryStepStateCompleted)
				ro.Status.CanaryStatus.CanaryRevision = "r1"
				return ro
			}(),
			wantDone: true, wantMovedOn: "it now releases revision r1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Completed(tt.ro, plan, nil)
			if got.Done != tt.wantDone || got.MovedOn != tt.wantMovedOn {
				t.Fatalf("Completed = %+v; want done %v, moved on %q", got, tt.wantDone, tt.wantMovedOn)
			}
		})
	}
}
