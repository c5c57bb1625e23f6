package daemonset

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod builds a pod view on node: revision "new" or "old", ready or not.
func pod(node, revision string, ready bool) podView {
	return podView{Name: "ds-" + node, Node: node, Revision: revision, Ready: ready}
}

func leaving(p podView) podView {
	p.Leaving = true
	p.Name += "-leaving"
	return p
}

func names(pods []podView) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestCount(t *testing.T) {
	tests := []struct {
		name        string
		pods        []podView
		replicas    int32
		want        tally
		wantSettled bool
	}{
		{
			name:        "all old and ready",
			pods:        []podView{pod("a", "old", true), pod("b", "old", true)},
			replicas:    2,
			want:        tally{Old: []podView{pod("a", "old", true), pod("b", "old", true)}, Live: 2},
			wantSettled: true,
		},
		{
			name:        "one updated ready, one updated unready, one old",
			pods:        []podView{pod("a", "new", true), pod("b", "new", false), pod("c", "old", true)},
			replicas:    3,
			want:        tally{Updated: 2, UpdatedReady: 1, Old: []podView{pod("c", "old", true)}, Unavailable: 1, Live: 3},
			wantSettled: true,
		},
		{
			name:     "a leaving old pod is in flight",
			pods:     []podView{leaving(pod("a", "old", true)), pod("b", "old", true)},
			replicas: 2,
			want:     tally{Old: []podView{pod("b", "old", true)}, InFlight: 1, Unavailable: 1, Extra: 1, Live: 1},
		},
		{
			name:     "a node without a pod is in flight",
			pods:     []podView{pod("b", "old", true)},
			replicas: 2,
			want:     tally{Old: []podView{pod("b", "old", true)}, InFlight: 1, Unavailable: 1, Live: 1},
		},
		{
			name:     "a new pod beside the leaving old one counts as updated",
			pods:     []podView{leaving(pod("a", "old", true)), pod("a", "new", false)},
			replicas: 1,
			want:     tally{Updated: 1, Unavailable: 1, Extra: 1, Live: 1},
		},
		{
			name:     "an old and a new live pod on one node: updated, with work left",
			pods:     []podView{pod("a", "old", true), {Name: "ds-a2", Node: "a", Revision: "new", Ready: true}},
			replicas: 1,
			want:     tally{Updated: 1, UpdatedReady: 1, Extra: 1, Live: 2},
		},
		{
			name:        "unscheduled pods count as nodes of their own",
			pods:        []podView{{Name: "p1", Revision: "new"}, {Name: "p2", Revision: "new"}},
			replicas:    2,
			want:        tally{Updated: 2, Unavailable: 2, Live: 2},
			wantSettled: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := count(tt.pods, "new", tt.replicas)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("count = %+v, want %+v", got, tt.want)
			}
			if s := got.settled(tt.replicas); s != tt.wantSettled {
				t.Fatalf("settled = %v, want %v", s, tt.wantSettled)
			}
		})
	}
}

func TestToDelete(t *testing.T) {
	six := func(updated int, unready ...string) []podView {
		var pods []podView
		for i, n := range []string{"a", "b", "c", "d", "e", "f"} {
			rev := "old"
			if i < updated {
				rev = "new"
			}
			ready := true
			for _, u := range unready {
				ready = ready && u != n
			}
			pods = append(pods, pod(n, rev, ready))
		}
		return pods
	}
	tests := []struct {
		name           string
		pods           []podView
		desired        int32
		maxUnavailable int32
		stable         string
		want           []string
	}{
		{name: "first batch of 1", pods: six(0), desired: 1, maxUnavailable: 1, want: []string{"ds-a"}},
		{name: "batch of 3 within maxUnavailable 1: one at a time", pods: six(1), desired: 3, maxUnavailable: 1, want: []string{"ds-b"}},
		{name: "batch of 3 within maxUnavailable 2", pods: six(1), desired: 3, maxUnavailable: 2, want: []string{"ds-b", "ds-c"}},
		{name: "never more than the batch", pods: six(1), desired: 3, maxUnavailable: 6, want: []string{"ds-b", "ds-c"}},
		{name: "batch already placed", pods: six(3), desired: 3, maxUnavailable: 1, want: []string{}},
		{name: "desired below the updated pods deletes nothing", pods: six(4), desired: 2, maxUnavailable: 3, want: []string{}},
		{
			name: "unready old pods go first and cost no availability",
			pods: six(0, "e", "f"), desired: 3, maxUnavailable: 1,
			want: []string{"ds-e", "ds-f"},
		},
		{
			name: "unready old pods use up the budget for ready ones",
			pods: six(0, "e", "f"), desired: 4, maxUnavailable: 2,
			want: []string{"ds-e", "ds-f"},
		},
		{
			name: "an unready new pod holds back ready old ones",
			pods: six(1, "a"), desired: 3, maxUnavailable: 1,
			want: []string{},
		},
		{
			name: "a pod in flight counts towards the batch and against maxUnavailable",
			pods: append([]podView{leaving(pod("a", "old", true))}, six(0)[1:]...), desired: 2, maxUnavailable: 1,
			want: []string{},
		},
		{
			name: "a pod in flight: the rest of the batch within maxUnavailable",
			pods: append([]podView{leaving(pod("a", "old", true))}, six(0)[1:]...), desired: 3, maxUnavailable: 2,
			want: []string{"ds-b"},
		},
		{
			name: "a node without its pod yet is in flight",
			pods: six(0)[1:], desired: 1, maxUnavailable: 1,
			want: []string{},
		},
		{name: "last batch", pods: six(4), desired: 6, maxUnavailable: 2, want: []string{"ds-e", "ds-f"}},
		{
			name: "restarted for a newer revision: the superseded revision's pod goes first, no stable one",
			pods: append(six(0)[:3], pod("d", "mid", true), pod("e", "old", true), pod("f", "old", true)), desired: 1, maxUnavailable: 1,
			stable: "old", want: []string{"ds-d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(count(tt.pods, "new", 6).toDelete(tt.desired, tt.maxUnavailable, tt.stable))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("toDelete = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestToDelete_repeatedUntilPlaced replays reconciles of a batch: each
// deletes what toDelete says, and the DaemonSet controller then recreates
// the deleted pods on the update revision, unready first. The batch must
// end exactly at desired, never exceeding maxUnavailable.
func TestToDelete_repeatedUntilPlaced(t *testing.T) {
	for _, tc := range []struct{ replicas, desired, maxUnavailable int32 }{
		{6, 1, 1}, {6, 3, 1}, {6, 3, 2}, {6, 6, 2}, {10, 5, 3}, {3, 3, 3},
	} {
		pods := make([]podView, tc.replicas)
		for i := range pods {
			pods[i] = pod(string(rune('a'+i)), "old", true)
		}
		for round := 0; ; round++ {
			if round > 50 {
				t.Fatalf("%+v: not placed after 50 rounds: %+v", tc, pods)
			}
			tl := count(pods, "new", tc.replicas)
			if tl.Unavailable > tc.maxUnavailable {
				t.Fatalf("%+v: %d nodes unavailable", tc, tl.Unavailable)
			}
			del := tl.toDelete(tc.desired, tc.maxUnavailable, "")
			if len(del) == 0 && tl.Updated == tc.desired && tl.UpdatedReady == tc.desired {
				break
			}
			gone := map[string]bool{}
			unavailable := tl.Unavailable
			for _, p := range del {
				gone[p.Name] = true
				if p.Ready {
					unavailable++
				}
			}
			if unavailable > tc.maxUnavailable {
				t.Fatalf("%+v: round %d leaves %d nodes unavailable", tc, round, unavailable)
			}
			for i, p := range pods {
				switch {
				case gone[p.Name]:
					pods[i] = pod(p.Node, "new", false) // recreated, not ready yet
				case p.Revision == "new" && !p.Ready:
					pods[i].Ready = true // became ready since the last round
				}
			}
		}
		if tl := count(pods, "new", tc.replicas); tl.Updated != tc.desired {
			t.Fatalf("%+v: %d updated", tc, tl.Updated)
		}
	}
}

func TestStableCandidate(t *testing.T) {
	tests := []struct {
		name     string
		pods     []podView
		previous string
		want     string
	}{
		{name: "what the old pods run", pods: []podView{pod("a", "v1", true), pod("b", "v1", true)}, previous: "v0", want: "v1"},
		{name: "the most old pods", pods: []podView{pod("a", "v1", true), pod("b", "v2", true), pod("c", "v2", true)}, want: "v2"},
		{name: "ties go to the smaller hash", pods: []podView{pod("a", "v2", true), pod("b", "v1", true)}, want: "v1"},
		{name: "no old pod: the previous revision", pods: []podView{pod("a", "new", true)}, previous: "v1", want: "v1"},
		{name: "no old pod and no history", pods: []podView{pod("a", "new", true)}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stableCandidate(count(tt.pods, "new", int32(len(tt.pods))), tt.previous); got != tt.want { //nolint:gosec // tiny
				t.Fatalf("stableCandidate = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestViewOf(t *testing.T) {
	now := metav1.Now()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ds-x", UID: "u1", Labels: map[string]string{"controller-revision-hash": "h1"}},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if got, want := viewOf(p), (podView{Name: "ds-x", UID: "u1", Node: "n1", Revision: "h1", Ready: true}); got != want {
		t.Fatalf("viewOf = %+v, want %+v", got, want)
	}
	p.DeletionTimestamp = &now
	if !viewOf(p).Leaving {
		t.Fatal("a pod being deleted is not leaving")
	}
	p.DeletionTimestamp = nil
	p.Status.Phase = corev1.PodFailed
	if !viewOf(p).Leaving {
		t.Fatal("a failed pod is not leaving")
	}
}
