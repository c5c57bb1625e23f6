package progress

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestOf_readsWhicheverStatusHoldsTheRelease(t *testing.T) {
	common := rolloutsv1beta1.CommonStatus{CurrentStepIndex: 2, CurrentStepState: rolloutsv1beta1.CanaryStepStatePaused, PodTemplateHash: "h2"}
	tests := []struct {
		name       string
		status     rolloutsv1beta1.RolloutStatus
		wantOK     bool
		want       Progress
		wantPodRev string
	}{
		{name: "no status", status: rolloutsv1beta1.RolloutStatus{}},
		{
			name:   "canary",
			status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{CommonStatus: common, CanaryRevision: "r2", CanaryReplicas: 3, CanaryReadyReplicas: 2}},
			wantOK: true, want: Progress{Common: common, Revision: "r2", Updated: 3, UpdatedReady: 2}, wantPodRev: "h2",
		},
		{
			name:   "blue-green",
			status: rolloutsv1beta1.RolloutStatus{BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{CommonStatus: common, UpdatedRevision: "r3", UpdatedReplicas: 4, UpdatedReadyReplicas: 1}},
			wantOK: true, want: Progress{Common: common, Revision: "r3", Updated: 4, UpdatedReady: 1, BlueGreen: true}, wantPodRev: "h2",
		},
		{
			name:   "canary without pod template hash yet",
			status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{CanaryRevision: "r2"}},
			wantOK: true, want: Progress{Revision: "r2"}, wantPodRev: "r2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Of(&rolloutsv1beta1.Rollout{Status: tt.status})
			if ok != tt.wantOK || got != tt.want {
				t.Fatalf("Of = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
			if ok && got.NewPodRevision() != tt.wantPodRev {
				t.Fatalf("NewPodRevision = %q, want %q", got.NewPodRevision(), tt.wantPodRev)
			}
		})
	}
}

func TestInRelease(t *testing.T) {
	tests := []struct {
		name  string
		phase rolloutsv1beta1.RolloutPhase
		state rolloutsv1beta1.CanaryStepState
		blue  bool
		want  bool
	}{
		{name: "progressing canary", phase: rolloutsv1beta1.RolloutPhaseProgressing, state: rolloutsv1beta1.CanaryStepStatePaused, want: true},
		{name: "progressing blue-green", phase: rolloutsv1beta1.RolloutPhaseProgressing, state: rolloutsv1beta1.CanaryStepStateUpgrade, blue: true, want: true},
		{name: "finishing", phase: rolloutsv1beta1.RolloutPhaseProgressing, state: rolloutsv1beta1.CanaryStepStateCompleted},
		{name: "healthy", phase: rolloutsv1beta1.RolloutPhaseHealthy, state: rolloutsv1beta1.CanaryStepStateCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: tt.phase}}
			c := rolloutsv1beta1.CommonStatus{CurrentStepState: tt.state}
			if tt.blue {
				ro.Status.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{CommonStatus: c}
			} else {
				ro.Status.CanaryStatus = &rolloutsv1beta1.CanaryStatus{CommonStatus: c}
			}
			if got := InRelease(ro); got != tt.want {
				t.Fatalf("InRelease = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	if got, want := Command(ro, "status", "--watch"), "kubectl sluice status web -n shop --watch"; got != want {
		t.Fatalf("Command = %q, want %q", got, want)
	}
	if got, want := Command(ro, "approve"), "kubectl sluice approve web -n shop"; got != want {
		t.Fatalf("Command = %q, want %q", got, want)
	}
}

func TestProgress_RoleOf(t *testing.T) {
	p := Progress{Common: rolloutsv1beta1.CommonStatus{StableRevision: "s1", PodTemplateHash: "h2"}, Revision: "r2"}
	same := func(rev string) func(string) bool { return func(v string) bool { return v == rev } }
	for rev, want := range map[string]string{"s1": "stable", "h2": "new", "r2": "new", "x9": "other"} {
		if got := p.RoleOf(same(rev)); got != want {
			t.Errorf("RoleOf(%s) = %s, want %s", rev, got, want)
		}
	}
	done := Progress{Common: rolloutsv1beta1.CommonStatus{StableRevision: "s1", PodTemplateHash: "s1"}}
	if got := done.RoleOf(same("s1")); got != "current" {
		t.Errorf("a revision both stable and new: %s, want current", got)
	}
}

func TestAbortOf(t *testing.T) {
	ro := &rolloutsv1beta1.Rollout{}
	ro.Name, ro.Namespace = "web", "shop"
	if _, ok := AbortOf(ro); ok {
		t.Fatal("a Rollout without an abort reads as aborted")
	}
	ro.Status.Phase = rolloutsv1beta1.RolloutPhaseAborted
	ro.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "v2", StableRevision: "v1", Step: 2, By: "ops", Via: "github-label"}
	a, ok := AbortOf(ro)
	if !ok || a.Who() != "ops via github-label" || a.State() != "moving every pod and all traffic back to revision v1" {
		t.Fatalf("aborted %+v, who %q, state %q", a, a.Who(), a.State())
	}
	ro.Status.Aborted.Held = true
	ro.Status.Conditions = []rolloutsv1beta1.RolloutCondition{{Type: rolloutsv1beta1.RolloutConditionStalled, Status: "True",
		Reason: "CannotHoldStable", Message: "revert the commit in Git"}}
	a, _ = AbortOf(ro)
	if a.State() != "blocked: revert the commit in Git" {
		t.Fatalf("state %q", a.State())
	}
	if adv := a.Advice(ro); adv[len(adv)-1] != "  kubectl sluice retry web -n shop" {
		t.Fatalf("advice %q", adv)
	}
}

// TestPut_writesWhereTheStrategyKeepsTheRelease: Put writes a release where
// Of reads it back, in blueGreenStatus for a blue-green Rollout and in
// canaryStatus otherwise, clearing the other; nil clears both.
func TestPut_writesWhereTheStrategyKeepsTheRelease(t *testing.T) {
	p := Progress{Common: rolloutsv1beta1.CommonStatus{CurrentStepIndex: 2, StableRevision: "r1"}, Revision: "r2", Updated: 3, UpdatedReady: 1}
	canaryRo := &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}}}}
	blueGreenRo := &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{}}}}
	stale := rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{CanaryRevision: "old"},
		BlueGreenStatus: &rolloutsv1beta1.BlueGreenStatus{UpdatedRevision: "old"}}

	for _, tt := range []struct {
		name          string
		ro            *rolloutsv1beta1.Rollout
		wantBlueGreen bool
	}{
		{name: "canary", ro: canaryRo},
		{name: "blue-green", ro: blueGreenRo, wantBlueGreen: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ro := tt.ro.DeepCopy()
			ro.Status = *stale.DeepCopy()
			Put(ro, &ro.Status, &p)
			if (ro.Status.BlueGreenStatus != nil) != tt.wantBlueGreen || (ro.Status.CanaryStatus != nil) == tt.wantBlueGreen {
				t.Fatalf("status = canary %+v, blue-green %+v", ro.Status.CanaryStatus, ro.Status.BlueGreenStatus)
			}
			want := p
			want.BlueGreen = tt.wantBlueGreen
			if got, ok := Of(ro); !ok || got != want {
				t.Fatalf("Of after Put = %+v, %v; want %+v", got, ok, want)
			}
			Put(ro, &ro.Status, nil)
			if ro.Status.CanaryStatus != nil || ro.Status.BlueGreenStatus != nil {
				t.Fatalf("Put(nil) left canary %+v, blue-green %+v", ro.Status.CanaryStatus, ro.Status.BlueGreenStatus)
			}
		})
	}
}
