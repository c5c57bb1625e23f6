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
			got, err := batchIDs(plan, tt.replicas, tt.noNeed, ps)
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
