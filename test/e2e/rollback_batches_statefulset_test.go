package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a release of v2 paused at step 2 of 1 / 50% / 100% (3 of 6 pods,
// ordinals 3-5) of a native StatefulSet, whose Rollout is annotated
// rollouts.kruise.io/rollback-in-batch: "true"
// When the image is set back to v1
// Then the rollback goes through the steps, counting only the 3 pods that
// need it and going down from the highest ordinal: 1 of them (ordinal 5)
// at step 1, 2 (ordinals 4-5) at step 2, each with the partition just
// below the ordinals rolled back (ordinals 0-2, already on v1, stay below
// it), then all; the StatefulSet ends on v1, handed back exactly as it was
// configured.
func TestStatefulSet_rollbackInBatch_goesThroughTheSteps(t *testing.T) {
	k := nativeStatefulSet
	ns := newNamespace(t)
	createWorkload(t, k, ns, "app", 6, v1, 6)
	originalSpec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	ro := rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil))
	ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	createRollout(t, ro)
	setWorkloadImage(t, k, ns, "app", v2)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, k, ns, "app", "step 1", afterStep(6, 1))
	approveByStatus(t, ns, "app")
	ro = waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, k, ns, "app", "step 2", afterStep(6, 3))
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), int64(3))
	release := ro.Status.CanaryStatus.CanaryRevision

	setWorkloadImage(t, k, ns, "app", v1)
	for _, want := range []struct {
		step      int32
		pods      map[string][]int
		partition int64
	}{
		{1, map[string][]int{v1: {0, 1, 2, 5}, v2: {3, 4}}, 5},
		{2, map[string][]int{v1: {0, 1, 2, 4, 5}, v2: {3}}, 4},
	} {
		r := waitRollout(t, ns, "app", fmt.Sprintf("rollback step %d paused", want.step), func(r *rolloutsv1beta1.Rollout) bool {
			return r.Status.CurrentStepIndex == want.step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
				r.Status.CanaryStatus.CanaryRevision != release
		})
		at := fmt.Sprintf("rollback step %d", want.step)
		if cs := r.Status.CanaryStatus; cs.CanaryRevision != cs.StableRevision {
			t.Fatalf("%s releases %s, want the stable revision %s", at, cs.CanaryRevision, cs.StableRevision)
		}
		waitPods(t, ns, "app", map[string]int{v1: len(want.pods[v1]), v2: len(want.pods[v2])})
		assertPods(t, k, ns, "app", at, want.pods)
		assertHeldAt(t, k, getWorkload(t, k, ns, "app"), want.partition)
		approveByStatus(t, ns, "app")
	}
	done := waitRollout(t, ns, "app", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == corev1.ConditionFalse
	})
	if !strings.Contains(done.Status.Message, "in batches") {
		t.Fatalf("message %q, want a rollback in batches", done.Status.Message)
	}
	waitPods(t, ns, "app", map[string]int{v1: 6})
	assertPods(t, k, ns, "app", "rolled back", afterStep(6, 0))
	assertHandedBack(t, k, ns, "app", originalSpec, true)
}
