package batchrelease

import (
	"strings"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

func TestPlanBehind(t *testing.T) {
	tests := []struct {
		name     string
		planID   string
		ws       workload.Status
		wantWait bool
	}{
		{name: "plan for the workload's revision", planID: "rev-2", ws: workload.Status{UpdateRevision: "rev-2"}},
		{name: "template reverted before the plan", planID: "rev-2", ws: workload.Status{UpdateRevision: "rev-1"}, wantWait: true},
		{name: "new revision before the plan", planID: "rev-2", ws: workload.Status{UpdateRevision: "rev-3"}, wantWait: true},
		{name: "the workload's rollout ID wins over its revision", planID: "release-7", ws: workload.Status{UpdateRevision: "rev-3", RolloutID: "release-7"}},
		{name: "a new rollout ID before the plan", planID: "release-7", ws: workload.Status{UpdateRevision: "rev-3", RolloutID: "release-8"}, wantWait: true},
		{name: "a BatchRelease on its own follows the workload", ws: workload.Status{UpdateRevision: "rev-3"}},
		{name: "revision not known yet", planID: "rev-2", ws: workload.Status{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := &rolloutsv1beta1.BatchRelease{Spec: rolloutsv1beta1.BatchReleaseSpec{ReleasePlan: rolloutsv1beta1.ReleasePlan{RolloutID: tt.planID}}}
			why := planBehind(br, &tt.ws)
			if (why != "") != tt.wantWait {
				t.Fatalf("planBehind = %q, want waiting %v", why, tt.wantWait)
			}
			if why != "" && !strings.Contains(why, tt.planID) {
				t.Errorf("message %q does not name the plan's rollout ID %s", why, tt.planID)
			}
		})
	}
}
