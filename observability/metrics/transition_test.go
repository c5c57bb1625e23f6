package metrics

import (
	"slices"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

const (
	progressing = rolloutsv1beta1.RolloutPhaseProgressing
	healthy     = rolloutsv1beta1.RolloutPhaseHealthy
	upgrade     = rolloutsv1beta1.CanaryStepStateUpgrade
	before      = rolloutsv1beta1.CanaryStepStateBeforeUpgrade
	paused      = rolloutsv1beta1.CanaryStepStatePaused
	ready       = rolloutsv1beta1.CanaryStepStateReady
	completed   = rolloutsv1beta1.CanaryStepStateCompleted
)

func TestBatchesReleased(t *testing.T) {
	tests := []struct {
		name     string
		old, cur view
		want     int32
	}{
		{"release starts at step 1", view{phase: healthy, step: 3, state: completed, revision: "a"},
			view{phase: progressing, step: 1, state: upgrade, revision: "b"}, 0},
		{"release starts with step 1 already upgraded", view{phase: healthy, step: 3, state: completed, revision: "a"},
			view{phase: progressing, step: 1, state: paused, revision: "b"}, 1},
		{"step 1 upgraded", view{phase: progressing, step: 1, state: upgrade, revision: "b"},
			view{phase: progressing, step: 1, state: paused, revision: "b"}, 1},
		{"still upgrading", view{phase: progressing, step: 1, state: upgrade, revision: "b"},
			view{phase: progressing, step: 1, state: upgrade, revision: "b"}, 0},
		{"approved: step 2 begins", view{phase: progressing, step: 1, state: paused, revision: "b"},
			view{phase: progressing, step: 2, state: before, revision: "b"}, 0},
		{"two steps in one pass", view{phase: progressing, step: 1, state: upgrade, revision: "b"},
			view{phase: progressing, step: 2, state: paused, revision: "b"}, 2},
		{"last step done", view{phase: progressing, step: 3, state: ready, revision: "b"},
			view{phase: progressing, step: 3, state: completed, revision: "b"}, 0},
		{"finished", view{phase: progressing, step: 3, state: completed, revision: "b"},
			view{phase: healthy, step: 3, state: completed, revision: "b"}, 0},
		{"jump back", view{phase: progressing, step: 3, state: paused, revision: "b"},
			view{phase: progressing, step: 1, state: before, revision: "b"}, 0},
		{"first sight of an up-to-date workload", view{},
			view{phase: healthy, step: 3, state: completed, revision: "a"}, 0},
		{"immediate rollback done", view{phase: progressing, step: 2, state: paused, revision: "b"},
			view{phase: healthy, step: 2, state: completed, revision: "a"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batchesReleased(tt.old, tt.cur); got != tt.want {
				t.Errorf("batchesReleased = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRollbackStarted(t *testing.T) {
	inRolling, cancelling, initializing := rolloutsv1beta1.ProgressingReasonInRolling,
		rolloutsv1beta1.ProgressingReasonCancelling, rolloutsv1beta1.ProgressingReasonInitializing
	tests := []struct {
		name     string
		old, cur view
		want     string
	}{
		{"immediate", view{phase: progressing, step: 2, state: paused, revision: "b", stable: "a", progressing: inRolling},
			view{phase: progressing, step: 2, state: paused, revision: "b", stable: "a", progressing: cancelling}, rollbackImmediate},
		{"immediate, still cancelling", view{phase: progressing, step: 2, revision: "b", stable: "a", progressing: cancelling},
			view{phase: progressing, step: 2, revision: "b", stable: "a", progressing: cancelling}, ""},
		{"in batches", view{phase: progressing, step: 2, state: paused, revision: "b", stable: "a", progressing: inRolling},
			view{phase: progressing, step: 1, state: upgrade, revision: "a", stable: "a", progressing: inRolling}, rollbackInBatch},
		{"restart for a third revision", view{phase: progressing, step: 2, state: paused, revision: "b", stable: "a", progressing: inRolling},
			view{phase: progressing, step: 1, state: upgrade, revision: "c", stable: "a", progressing: initializing}, ""},
		{"new release after a completed one", view{phase: healthy, step: 3, state: completed, revision: "b", stable: "b"},
			view{phase: progressing, step: 1, state: upgrade, revision: "c", stable: "b", progressing: inRolling}, ""},
		{"step moves on", view{phase: progressing, step: 1, state: paused, revision: "b", stable: "a", progressing: inRolling},
			view{phase: progressing, step: 2, state: upgrade, revision: "b", stable: "a", progressing: inRolling}, ""},
		{"aborted", view{phase: progressing, step: 2, state: paused, revision: "b", stable: "a", progressing: inRolling},
			view{phase: rolloutsv1beta1.RolloutPhaseAborted, step: 2, state: paused, revision: "b", stable: "a", progressing: "Aborting"}, rollbackAbort},
		{"the revert completing an abort is the same rollback", view{phase: rolloutsv1beta1.RolloutPhaseAborted, step: 2, revision: "b", stable: "a", progressing: "Aborted"},
			view{phase: progressing, step: 2, revision: "b", stable: "a", progressing: cancelling}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rollbackStarted(tt.old, tt.cur); got != tt.want {
				t.Errorf("rollbackStarted = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApprovalSource(t *testing.T) {
	tests := []struct{ via, want string }{
		{"status", "status-patch"},
		{"annotation", "annotation"},
		{"", "annotation"},
		{"label", "github-label"},
		{"commit", "git-trailer"},
		{"plugin", "plugin"},
		{"anything a user wrote", "other"},
	}
	for _, tt := range tests {
		t.Run(tt.via, func(t *testing.T) {
			if got := approvalSource(tt.via); got != tt.want {
				t.Errorf("approvalSource(%q) = %q, want %q", tt.via, got, tt.want)
			}
		})
	}
}

func TestTransitionEvents(t *testing.T) {
	pausedReason := rolloutsv1beta1.ProgressingReasonPaused
	inRolling := rolloutsv1beta1.ProgressingReasonInRolling
	tests := []struct {
		name     string
		old, cur view
		evented  []string
		want     []string
	}{
		{"step moves on after a timed pause", view{phase: progressing, step: 1, state: ready, revision: "b"},
			view{phase: progressing, step: 2, state: before, revision: "b"}, nil, []string{"StepStarted"}},
		{"step jump is evented by the machine", view{phase: progressing, step: 1, state: ready, revision: "b"},
			view{phase: progressing, step: 3, state: before, revision: "b"}, []string{"StepJumped"}, nil},
		{"first step of a release", view{phase: healthy, step: 3, state: completed, revision: "a"},
			view{phase: progressing, step: 1, state: upgrade, revision: "b"}, []string{"Progressing"}, nil},
		{"same step", view{phase: progressing, step: 1, state: upgrade, revision: "b"},
			view{phase: progressing, step: 1, state: paused, revision: "b"}, nil, nil},
		{"deleted", view{phase: progressing, step: 1, revision: "b"},
			view{phase: rolloutsv1beta1.RolloutPhaseTerminating, step: 1, revision: "b"}, nil, []string{"Terminating"}},
		{"no longer stalled", view{phase: progressing, step: 1, revision: "b", stalled: true},
			view{phase: progressing, step: 1, revision: "b"}, nil, []string{"ProgressMade"}},
		{"paused by spec", view{phase: progressing, step: 1, revision: "b", progressing: inRolling},
			view{phase: progressing, step: 1, revision: "b", progressing: pausedReason}, nil, []string{"Paused"}},
		{"resumed", view{phase: progressing, step: 1, revision: "b", progressing: pausedReason},
			view{phase: progressing, step: 1, revision: "b", progressing: inRolling}, nil, []string{"Resumed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range transitionEvents(tt.old, tt.cur, 3, tt.evented) {
				got = append(got, e.Reason)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events = %v, want %v", got, tt.want)
			}
		})
	}
}
