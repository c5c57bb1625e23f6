package gitops

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/prview"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// surfaceRollout is Rollout shop/checkout releasing 4 pods in steps 1 (10% of the requests),
// 50% (50%) and all, at step with state, 1 pod of the canary (ready).
func surfaceRollout(step int32, state rolloutsv1beta1.CanaryStepState, phase rolloutsv1beta1.RolloutPhase, routed bool) *rolloutsv1beta1.Rollout {
	var steps []rolloutsv1beta1.CanaryStep
	for _, s := range []struct{ replicas, traffic string }{{"1", "10%"}, {"50%", "50%"}, {"100%", ""}} {
		v := intstr.Parse(s.replicas)
		st := rolloutsv1beta1.CanaryStep{Replicas: &v}
		if s.traffic != "" {
			tr := s.traffic
			st.Traffic = &tr
		}
		steps = append(steps, st)
	}
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"},
		Spec:       rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}}},
		Status: rolloutsv1beta1.RolloutStatus{Phase: phase, CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus:   rolloutsv1beta1.CommonStatus{StableRevision: "stable1", PodTemplateHash: "canary2", CurrentStepIndex: step, CurrentStepState: state},
			CanaryRevision: "canary2", CanaryReplicas: 1, CanaryReadyReplicas: 1,
		}},
	}
	if routed {
		ro.Spec.Strategy.Canary.TrafficRoutings = []rolloutsv1beta1.TrafficRoutingRef{{Service: "checkout"}}
	}
	return ro
}

// The pull request's view of a release comes from release/progress and the gate's status:
// the state and buttons follow the decided commit status, the pods are what the current step
// releases (not the pods of the moment, which would edit the comment at every pod), and the
// requests the step's weight on the routes or the share of pods.
func TestReleaseView(t *testing.T) {
	out := gitopsv1alpha1.BoundRollout{Name: "checkout", Revision: rev, Step: 1, Steps: 3, PullRequest: 42,
		Approvals: []gitopsv1alpha1.AppliedApproval{{Action: "Approve", Step: 1, By: "jane", Via: ViaCheckRun, At: metav1.NewTime(after)}},
		Refused:   []gitopsv1alpha1.RefusedIntent{{Reason: ReasonInsufficientPermission, Message: "button ... mallory has read permission"}},
		Quorum: &gitopsv1alpha1.QuorumStatus{Step: 2, Needed: 2, Waiting: []string{"1 more"}, Approvals: []gitopsv1alpha1.GivenApproval{
			{Action: "Approve", By: "bob", Via: ViaCheckRun, At: metav1.NewTime(after), PullRequest: 42, Commit: rev, Required: []string{"security"}}}}}
	pending := scm.CommitStatus{State: scm.StatePending, Description: "step 1/3 paused: add label sluice/approve to continue"}
	aborted := surfaceRollout(2, rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.RolloutPhaseAborted, true)
	aborted.Status.Aborted = &rolloutsv1beta1.AbortStatus{Revision: "canary2", StableRevision: "stable1", Step: 2, By: "ops", Via: ViaCheckRun, Held: true}
	tests := []struct {
		name        string
		ro          *rolloutsv1beta1.Rollout
		status      scm.CommitStatus
		buttons     bool
		wantState   prview.State
		wantMarks   []string
		wantSplit   []int // percent per revision, stable first
		wantPods    []int32
		wantButtons int
	}{
		{name: "paused for approval, routed", ro: surfaceRollout(1, rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.RolloutPhaseProgressing, true),
			status: pending, buttons: true, wantState: prview.StateWaiting, wantMarks: []string{"paused", "pending", "pending"},
			wantSplit: []int{90, 10}, wantPods: []int32{3, 1}, wantButtons: 3},
		{name: "paused, not routed: ready pods", ro: surfaceRollout(1, rolloutsv1beta1.CanaryStepStatePaused, rolloutsv1beta1.RolloutPhaseProgressing, false),
			status: pending, wantState: prview.StateWaiting, wantMarks: []string{"paused", "pending", "pending"}, wantSplit: []int{75, 25}, wantPods: []int32{3, 1}},
		{name: "between steps", ro: surfaceRollout(2, rolloutsv1beta1.CanaryStepStateUpgrade, rolloutsv1beta1.RolloutPhaseProgressing, true),
			status: scm.CommitStatus{State: scm.StatePending, Description: "step 2/3 in progress"}, buttons: true, wantState: prview.StateInProgress,
			wantMarks: []string{"done", "current", "pending"}, wantSplit: []int{50, 50}, wantPods: []int32{2, 2}, wantButtons: 2},
		{name: "released", ro: surfaceRollout(3, rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.RolloutPhaseHealthy, true),
			status: scm.CommitStatus{State: scm.StateSuccess, Description: "released: 3/3 steps done"}, buttons: true, wantState: prview.StateSucceeded,
			wantMarks: []string{"done", "done", "done"}, wantSplit: []int{100}, wantPods: []int32{4}},
		{name: "aborted: held on stable", ro: aborted, status: scm.CommitStatus{State: scm.StateFailure, Description: "rolled back at step 2/3 by ops"},
			buttons: true, wantState: prview.StateFailed, wantMarks: []string{"done", "aborted", "pending"}, wantSplit: []int{100}, wantPods: []int32{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := releaseView(tt.ro, out, tt.status, policy(), 4, tt.buttons)
			if rel.State != tt.wantState || rel.Rollout != "shop/checkout" || rel.Commit != rev || rel.Headline != tt.status.Description {
				t.Fatalf("release = %+v, want state %s", rel, tt.wantState)
			}
			var marks []string
			for _, s := range rel.StepList {
				marks = append(marks, s.Mark)
			}
			var split []int
			var pods []int32
			for _, r := range rel.Revisions {
				split, pods = append(split, r.Percent), append(pods, r.Pods)
			}
			if !slices.Equal(marks, tt.wantMarks) || !slices.Equal(split, tt.wantSplit) || !slices.Equal(pods, tt.wantPods) {
				t.Fatalf("marks %v split %v pods %v, want %v %v %v", marks, split, pods, tt.wantMarks, tt.wantSplit, tt.wantPods)
			}
			if n := len(prview.Actions(rel)); n != tt.wantButtons {
				t.Fatalf("%d buttons, want %d", n, tt.wantButtons)
			}
			if len(rel.Approvals) != 1 || rel.Approvals[0].By != "jane" || len(rel.Refused) != 1 || rel.Commands.Approve != "sluice/approve" {
				t.Fatalf("approvals %+v, refusals %+v, commands %+v: not the gate's", rel.Approvals, rel.Refused, rel.Commands)
			}
			q := rel.Quorum
			if rel.PullRequest != 42 || q == nil || q.Step != 2 || q.Needed != 2 || len(q.Approvals) != 1 || strings.Join(q.Waiting, ",") != "1 more" {
				t.Fatalf("pull request %d, quorum %+v: not the gate's", rel.PullRequest, q)
			}
			if a := q.Approvals[0]; a.By != "bob" || a.Via != ViaCheckRun || !a.At.Equal(after) || a.PullRequest != 42 || a.Commit != rev ||
				strings.Join(a.Required, ",") != "security" || a.Action != "Approve" {
				t.Fatalf("quorum approval %+v, not the gate's", a)
			}
		})
	}
}
