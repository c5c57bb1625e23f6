package daemonset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestStatusOf(t *testing.T) {
	v1, v2 := "registry.example/a:v1", "registry.example/a:v2"
	observed := func(ds *appsv1.DaemonSet, updated int32) *appsv1.DaemonSet {
		ds.Generation, ds.Status.ObservedGeneration = 2, 2
		ds.Status.DesiredNumberScheduled, ds.Status.NumberAvailable, ds.Status.UpdatedNumberScheduled = 4, 4, updated
		return ds
	}
	pods := func(updated int, ready bool) []podView {
		var out []podView
		for i, n := range []string{"a", "b", "c", "d"} {
			rev := "h1"
			if i < updated {
				rev = "h2"
			}
			out = append(out, pod(n, rev, ready))
		}
		return out
	}
	rev := revisions{update: "h2", previous: "h1"}
	tests := []struct {
		name                          string
		ds                            *appsv1.DaemonSet
		pods                          []podView
		wantSettled, wantUpToDate     bool
		wantRollback                  bool
		wantUpdated, wantUpdatedReady int32
	}{
		{
			name: "held mid-release", ds: observed(heldDaemonSet(v2), 1), pods: pods(1, true),
			wantSettled: true, wantUpdated: 1, wantUpdatedReady: 1,
		},
		{
			name: "held with every pod updated is not up to date", ds: observed(heldDaemonSet(v2), 4), pods: pods(4, true),
			wantSettled: true, wantUpdated: 4, wantUpdatedReady: 4,
		},
		{
			name: "handed back and fully updated", ds: observed(daemonSet(v2), 4), pods: pods(4, true),
			wantSettled: true, wantUpToDate: true, wantUpdated: 4, wantUpdatedReady: 4,
		},
		{
			name: "handed back, pods updated but unready", ds: observed(daemonSet(v2), 4), pods: pods(4, false),
			wantSettled: true, wantUpdated: 4,
		},
		{
			name: "handed back, controller status behind the pods", ds: observed(daemonSet(v2), 3), pods: pods(4, true),
			wantSettled: true, wantUpdated: 4, wantUpdatedReady: 4,
		},
		{
			name: "a pod being replaced", ds: observed(heldDaemonSet(v2), 1), pods: append(pods(1, true)[:3], leaving(pod("d", "h1", true))),
			wantUpdated: 1, wantUpdatedReady: 1,
		},
		{
			name: "generation not observed", ds: func() *appsv1.DaemonSet {
				ds := observed(daemonSet(v2), 4)
				ds.Generation = 3
				return ds
			}(), pods: pods(4, true),
			wantUpdated: 4, wantUpdatedReady: 4,
		},
		{
			name: "template back to the stable revision", ds: func() *appsv1.DaemonSet {
				ds := observed(heldDaemonSet(v1), 0)
				ds.Labels[rolloutsv1beta1.StableRevisionLabel] = "h2"
				return ds
			}(), pods: pods(2, true),
			wantSettled: true, wantRollback: true, wantUpdated: 2, wantUpdatedReady: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := statusOf(tt.ds, rev, count(tt.pods, rev.update, tt.ds.Status.DesiredNumberScheduled))
			if s.Settled != tt.wantSettled || s.UpToDate != tt.wantUpToDate || s.InRollback != tt.wantRollback {
				t.Fatalf("settled=%v upToDate=%v inRollback=%v, want %v %v %v",
					s.Settled, s.UpToDate, s.InRollback, tt.wantSettled, tt.wantUpToDate, tt.wantRollback)
			}
			if s.UpdatedReplicas != tt.wantUpdated || s.UpdatedReadyReplicas != tt.wantUpdatedReady || s.Replicas != 4 {
				t.Fatalf("replicas %d updated %d ready %d", s.Replicas, s.UpdatedReplicas, s.UpdatedReadyReplicas)
			}
			if s.UpdateRevision != "h2" || s.PodTemplateHash != "h2" || s.RevisionLabel != "controller-revision-hash" {
				t.Fatalf("revisions %+v", s)
			}
			if s.MaxUnavailable != 2 {
				t.Fatalf("maxUnavailable %d, want the DaemonSet's own 2", s.MaxUnavailable)
			}
		})
	}
}

func TestMaxUnavailableOf(t *testing.T) {
	ru := func(v string) appsv1.DaemonSetUpdateStrategy {
		iv := intstr.Parse(v)
		return appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &iv}}
	}
	tests := []struct {
		name     string
		strategy appsv1.DaemonSetUpdateStrategy
		replicas int32
		want     int32
	}{
		{name: "a number", strategy: ru("2"), replicas: 6, want: 2},
		{name: "a percentage rounds up", strategy: ru("30%"), replicas: 6, want: 2},
		{name: "zero (a surging DaemonSet) is one", strategy: ru("0"), replicas: 6, want: 1},
		{name: "no rollingUpdate is the default 1", strategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}, replicas: 6, want: 1},
		{name: "capped to the replicas", strategy: ru("10"), replicas: 3, want: 3},
		{name: "no pods", strategy: ru("100%"), replicas: 0, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maxUnavailableOf(tt.strategy, tt.replicas); got != tt.want {
				t.Fatalf("maxUnavailableOf = %d, want %d", got, tt.want)
			}
		})
	}
}
