package trafficrouting

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestPlanFor(t *testing.T) {
	weight := rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr.To[int32](20)}
	match := rolloutsv1alpha1.TrafficRoutingStrategy{Matches: []rolloutsv1alpha1.HttpRouteMatch{{
		Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user", Value: "beta"}},
	}}}
	tests := []struct {
		name        string
		deleting    bool
		strategy    rolloutsv1alpha1.TrafficRoutingStrategy
		rollouts    []string
		wantAct     action
		wantPhase   rolloutsv1alpha1.TrafficRoutingPhase
		wantBusy    rolloutsv1alpha1.TrafficRoutingPhase
		wantRelease bool
	}{
		{name: "alone with a weight shifts", strategy: weight, wantAct: shift,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseHealthy, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseProgressing},
		{name: "alone with a match shifts", strategy: match, wantAct: shift,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseHealthy, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseProgressing},
		{name: "alone and empty restores", wantAct: restore,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseHealthy, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseFinalizing},
		{name: "used by a Rollout hands the routes over", strategy: weight, rollouts: []string{"app"}, wantAct: restore,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseProgressing, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseFinalizing},
		{name: "deleted while used waits", deleting: true, strategy: weight, rollouts: []string{"app"}, wantAct: leave,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseTerminating},
		{name: "deleted alone restores and goes", deleting: true, strategy: weight, wantAct: restore, wantRelease: true,
			wantPhase: rolloutsv1alpha1.TrafficRoutingPhaseTerminating, wantBusy: rolloutsv1alpha1.TrafficRoutingPhaseTerminating},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planFor(tt.deleting, tt.strategy, tt.rollouts)
			if got.act != tt.wantAct || got.phase != tt.wantPhase || got.busyPhase != tt.wantBusy || got.release != tt.wantRelease {
				t.Errorf("planFor() = %+v, want act %v phase %s busy %s release %v", got, tt.wantAct, tt.wantPhase, tt.wantBusy, tt.wantRelease)
			}
		})
	}
}

func TestRolloutsOf(t *testing.T) {
	tr := &rolloutsv1alpha1.TrafficRouting{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{
		rolloutsv1alpha1.TrafficRoutingFinalizer, "progressing.rollouts.kruise.io/b", "progressing.rollouts.kruise.io/a", "progressing.rollouts.kruise.io/",
	}}}
	got := rolloutsOf(tr)
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("rolloutsOf() = %v, want [a b]", got)
	}
}
