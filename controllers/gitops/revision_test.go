package gitops

import (
	"testing"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

func TestKeptRevision(t *testing.T) {
	const released, applied = "aaaa", "bbbb"
	pending := &gitopsv1alpha1.PostedStatus{SHA: released, State: "pending"}
	tests := []struct {
		name string
		prev gitopsv1alpha1.BoundRollout
		r    RolloutView
		want string
	}{
		{name: "first sight", r: RolloutView{CanaryRevision: "c2", InRelease: true}, want: applied},
		{name: "a later commit during the release of the same workload revision",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: pending},
			r:    RolloutView{CanaryRevision: "c2", StableRevision: "c1", InRelease: true}, want: released},
		{name: "a new workload revision",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: pending},
			r:    RolloutView{CanaryRevision: "c3", StableRevision: "c2", InRelease: true}, want: applied},
		{name: "just completed, released not yet posted",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: pending},
			r:    RolloutView{CanaryRevision: "c2", StableRevision: "c2", Healthy: true}, want: released},
		{name: "finishing: steps done, not yet Healthy",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: pending},
			r:    RolloutView{CanaryRevision: "c2", StableRevision: "c1"}, want: released},
		{name: "completed and posted",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: &gitopsv1alpha1.PostedStatus{SHA: released, State: "success"}},
			r:    RolloutView{CanaryRevision: "c2", StableRevision: "c2", Healthy: true}, want: applied},
		{name: "rolled back and healthy again: the revision keeps its failure, the revert gets its success",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c1", Posted: &gitopsv1alpha1.PostedStatus{SHA: released, State: "failure"}},
			r:    RolloutView{CanaryRevision: "c1", StableRevision: "c1", Healthy: true}, want: released},
		{name: "aborted: held on stable until Git changes",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: &gitopsv1alpha1.PostedStatus{SHA: released, State: "failure"}},
			r:    RolloutView{CanaryRevision: "c2", StableRevision: "c1", Aborted: &AbortView{}}, want: released},
		{name: "aborted, then the revert synced before the abort finished: the revision keeps its failure while the Rollout finishes",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: &gitopsv1alpha1.PostedStatus{SHA: released, State: "failure"}},
			r:    RolloutView{CanaryRevision: "c1", StableRevision: "c1"}, want: released},
		{name: "the revert synced before the gate saw it: the unfinished revision is kept to report it",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", StableRevision: "c1", Posted: pending},
			r:    RolloutView{CanaryRevision: "c1", StableRevision: "c1", Healthy: true}, want: released},
		{name: "another revision released while the gate looked away: the new one is followed",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", StableRevision: "c1", Posted: pending},
			r:    RolloutView{CanaryRevision: "c3", StableRevision: "c3", Healthy: true}, want: applied},
		{name: "aborted, then a new commit starts a new release",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c2", Posted: &gitopsv1alpha1.PostedStatus{SHA: released, State: "failure"}},
			r:    RolloutView{CanaryRevision: "c3", StableRevision: "c1", InRelease: true}, want: applied},
		{name: "healthy, nothing was released",
			prev: gitopsv1alpha1.BoundRollout{Revision: released, CanaryRevision: "c1"},
			r:    RolloutView{CanaryRevision: "c1", StableRevision: "c1", Healthy: true}, want: applied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keptRevision(tt.prev, tt.r, applied); got != tt.want {
				t.Errorf("keptRevision() = %s, want %s", got, tt.want)
			}
		})
	}
}

// The race of a new template applied before the tool records its commit:
// the release waits rather than taking the previous release's commit.
func TestToolLags(t *testing.T) {
	prev := gitopsv1alpha1.BoundRollout{Revision: "aaaa", CanaryRevision: "c1", Posted: &gitopsv1alpha1.PostedStatus{SHA: "aaaa", State: "success"}}
	newRelease := RolloutView{CanaryRevision: "c2", StableRevision: "c1", InRelease: true}
	if kept := keptRevision(prev, newRelease, "aaaa"); !toolLags(prev, newRelease, kept) {
		t.Errorf("a new release with the tool still on the released commit: not waited for")
	}
	if kept := keptRevision(prev, newRelease, "bbbb"); toolLags(prev, newRelease, kept) {
		t.Errorf("a new release with the tool on a new commit: waited for")
	}
	same := RolloutView{CanaryRevision: "c1", StableRevision: "c0", InRelease: true}
	if toolLags(prev, same, "aaaa") {
		t.Errorf("the release going on: waited for")
	}
	if toolLags(gitopsv1alpha1.BoundRollout{}, newRelease, "aaaa") {
		t.Errorf("first sight: waited for")
	}
}
