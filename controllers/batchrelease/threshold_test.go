package batchrelease

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
)

// TestFailureThreshold_unsetToleratesNoneUnlessOptedIn: with 5 pods in the
// batch and a workload whose maxUnavailable is 2, an unset failureThreshold
// tolerates no unready pod (OpenKruise's behaviour) unless the BatchRelease
// opts in to the workload's maxUnavailable; a set one is used as it is.
func TestFailureThreshold_unsetToleratesNoneUnlessOptedIn(t *testing.T) {
	one := intstr.FromInt32(1)
	tests := []struct {
		name        string
		threshold   *intstr.IntOrString
		annotations map[string]string
		want        int32
	}{
		{name: "unset: none", want: 0},
		{name: "unset with the opt-in: maxUnavailable", annotations: map[string]string{
			rolloutsv1beta1.FailureThresholdDefaultAnnotation: rolloutsv1beta1.FailureThresholdDefaultMaxUnavailable}, want: 2},
		{name: "unset with another value: none", annotations: map[string]string{
			rolloutsv1beta1.FailureThresholdDefaultAnnotation: "yes"}, want: 0},
		{name: "set: as set, whatever the annotation", threshold: &one, annotations: map[string]string{
			rolloutsv1beta1.FailureThresholdDefaultAnnotation: rolloutsv1beta1.FailureThresholdDefaultMaxUnavailable}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := &rolloutsv1beta1.BatchRelease{
				ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations},
				Spec:       rolloutsv1beta1.BatchReleaseSpec{ReleasePlan: rolloutsv1beta1.ReleasePlan{FailureThreshold: tt.threshold}},
			}
			got, err := batch.Tolerated(failureThreshold(br, &workload.Status{MaxUnavailable: 2}), 5)
			if err != nil || got != tt.want {
				t.Fatalf("tolerated = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
