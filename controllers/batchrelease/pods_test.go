package batchrelease

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestBatchIDs(t *testing.T) {
	plan := []rolloutsv1beta1.ReleaseBatch{
		{CanaryReplicas: intstr.FromInt32(1)}, {CanaryReplicas: intstr.FromString("50%")}, {CanaryReplicas: intstr.FromString("100%")},
	}
	t0 := time.Unix(1000, 0)
	pods := func(n int) []*corev1.Pod {
		out := make([]*corev1.Pod, n)
		for i := range out {
			// Created newest first, so the sort has work to do.
			out[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%02d", i), CreationTimestamp: metav1.NewTime(t0.Add(-time.Duration(i) * time.Second))}}
		}
		return out
	}
	tests := []struct {
		name     string
		replicas int32
		noNeed   int32
		pods     int
		want     []int
	}{
		{"first batch", 10, 0, 1, []int{1}},
		{"second batch", 10, 0, 5, []int{1, 2, 2, 2, 2}},
		{"all", 4, 0, 4, []int{1, 2, 3, 3}},
		{"scaled up: counts follow the plan", 20, 0, 10, []int{1, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
		{"a batch that adds no pods is skipped; extra pods go to the last", 2, 0, 3, []int{1, 3, 3}},
		{"none", 10, 0, 0, []int{}},
		{"rollback in batches: pods already there are not labelled", 10, 5, 8, []int{0, 0, 0, 0, 0, 1, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pods(tt.pods)
			got, err := batchIDs(plan, tt.replicas, tt.noNeed, "r1", ps)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("batchIDs() = %v, want %v", got, tt.want)
			}
			for i := 1; i < len(ps); i++ {
				if ps[i].CreationTimestamp.Before(&ps[i-1].CreationTimestamp) {
					t.Fatalf("pods not sorted oldest first")
				}
			}
		})
	}
}

// TestBatchIDs_labelsStay: a pod keeps the batch it was labelled with while
// its batch is within the plan, even when pods created later in the same
// second sort before it. Kubernetes' creation times have one-second
// resolution, so a batch's pods often share the second of the pod before
// them; relabelling would move a pod from batch 1 to batch 2 mid-release
// (a user selecting batch 1 would see another pod) and cost a write.
func TestBatchIDs_labelsStay(t *testing.T) {
	plan := []rolloutsv1beta1.ReleaseBatch{
		{CanaryReplicas: intstr.FromInt32(1)}, {CanaryReplicas: intstr.FromString("50%")}, {CanaryReplicas: intstr.FromString("100%")},
	}
	t0 := metav1.NewTime(time.Unix(1000, 0))
	pod := func(name, rolloutID, batch string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: t0, Labels: map[string]string{}}}
		if rolloutID != "" {
			p.Labels[rolloutsv1beta1.RolloutIDLabel] = rolloutID
			p.Labels[rolloutsv1beta1.RolloutBatchIDLabel] = batch
		}
		return p
	}
	tests := []struct {
		name     string
		replicas int32
		noNeed   int32
		pods     []*corev1.Pod
		want     map[string]int
	}{
		{
			name:     "batch 1's pod keeps its label when the new ones sort first",
			replicas: 10,
			pods:     []*corev1.Pod{pod("web-d", "r1", "1"), pod("web-a", "", ""), pod("web-b", "", ""), pod("web-c", "", ""), pod("web-e", "", "")},
			want:     map[string]int{"web-d": 1, "web-a": 2, "web-b": 2, "web-c": 2, "web-e": 2},
		},
		{
			name:     "a label of another release counts as none",
			replicas: 10,
			pods:     []*corev1.Pod{pod("web-d", "r0", "1"), pod("web-a", "", "")},
			want:     map[string]int{"web-a": 1, "web-d": 2},
		},
		{
			name:     "a batch over its plan (scaled down) passes its newest pods on; the others keep theirs",
			replicas: 4,
			pods:     []*corev1.Pod{pod("web-a", "r1", "1"), pod("web-b", "r1", "1"), pod("web-c", "r1", "2")},
			want:     map[string]int{"web-a": 1, "web-b": 3, "web-c": 2},
		},
		{
			name:     "a batch id past the plan is assigned again",
			replicas: 10,
			pods:     []*corev1.Pod{pod("web-a", "r1", "7"), pod("web-b", "r1", "x")},
			want:     map[string]int{"web-a": 1, "web-b": 2},
		},
		{
			name:     "rollback in batches: the oldest unlabelled pods ran the revision before",
			replicas: 10,
			noNeed:   2,
			pods:     []*corev1.Pod{pod("web-c", "r1", "1"), pod("web-a", "", ""), pod("web-b", "", ""), pod("web-d", "", "")},
			want:     map[string]int{"web-c": 1, "web-a": 0, "web-b": 0, "web-d": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := batchIDs(plan, tt.replicas, tt.noNeed, "r1", tt.pods)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]int{}
			for i, p := range tt.pods {
				byName[p.Name] = got[i]
			}
			if fmt.Sprint(byName) != fmt.Sprint(tt.want) {
				t.Fatalf("batchIDs() = %v, want %v", byName, tt.want)
			}
		})
	}
}
