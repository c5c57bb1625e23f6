package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a release paused at step 2 of 4
// When nextStepIndex is patched to 4, then to 1
// Then the release jumps forward to step 4, then back to step 1 without
// scaling any new pod down.
func TestRollout_stepJump_forwardAndBackNeverScalesDown(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("30%", nil), step("60%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	jump(t, ns, "web", 4)
	waitRollout(t, ns, "web", "completed after jumping to the last step", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)

	// A second release: jump back from step 3 to step 1.
	setImage(t, ns, "web", v3)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	jump(t, ns, "web", 1)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v3] != 6 {
		t.Fatalf("after jumping back to step 1: pods by image %v, want the 6 new pods kept", got)
	}
}

// jump patches status.canaryStatus.nextStepIndex, as kubectl-kruise does.
func jump(t *testing.T, ns, name string, next int32) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Appendf(nil, `{"status":{"canaryStatus":{"nextStepIndex":%d}}}`, next)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("patching nextStepIndex: %v", err)
	}
}

// hostPorts hands each caller of unschedulableBeyondNodes a host port of
// its own: the nodes are shared by the package's tests, and pods of an
// earlier test (still terminating, or kept for a failed test's dump) must
// not take the one port a later test's pods need.
var hostPorts atomic.Int32

// unschedulableBeyondNodes makes the new revision's pods need a host port,
// so at most one runs per node (3 nodes) and the rest stay Pending.
func unschedulableBeyondNodes(t *testing.T, ns, name string) {
	t.Helper()
	port := 18080 + hostPorts.Add(1)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q,"ports":[{"containerPort":8080,"hostPort":%d}]}]}}}}`, v2, port)
	d := getDeployment(t, ns, name)
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
}

// Given a Deployment of 10 pods with maxUnavailable 25% (2 pods), and a new
// revision of which only 3 pods can run
// When a timed step asks for 5 new pods
// Then with failureThreshold unset the step does not count as done (zero
// tolerance, as OpenKruise behaves): it stays upgrading and reports
// Stalled naming the pending pods; so does failureThreshold 0; with the
// opt-in sluice.dev/failure-threshold-default: maxUnavailable it counts as
// done with 3 ready, as the workload's maxUnavailable tolerates 2.
func TestRollout_failureThresholdUnset_toleratesNone(t *testing.T) {
	for _, tt := range []struct {
		name      string
		threshold *intstr.IntOrString
		optIn     bool
		wantDone  bool
	}{
		{"unset tolerates none", nil, false, false},
		{"zero tolerates none", ptr(intstr.FromInt32(0)), false, false},
		{"unset with the opt-in tolerates maxUnavailable", nil, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			deployment(t, ns, "web", 10, v1)
			ro := newRollout(ns, "web", step("50%", ptr[int32](1)), step("100%", nil))
			ro.Spec.Strategy.Canary.FailureThreshold = tt.threshold
			ro.Annotations = map[string]string{}
			if tt.optIn {
				ro.Annotations[rolloutsv1beta1.FailureThresholdDefaultAnnotation] = rolloutsv1beta1.FailureThresholdDefaultMaxUnavailable
			}
			if !tt.wantDone {
				ro.Annotations[rolloutsv1beta1.ProgressDeadlineAnnotation] = "3s"
			}
			createRollout(t, ro)
			unschedulableBeyondNodes(t, ns, "web")
			if tt.wantDone {
				got := waitRollout(t, ns, "web", "past step 1", func(r *rolloutsv1beta1.Rollout) bool {
					return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 2
				})
				if got.Status.CanaryStatus.CanaryReadyReplicas != 3 {
					t.Fatalf("step 1 done with %d ready, want 3", got.Status.CanaryStatus.CanaryReadyReplicas)
				}
				return
			}
			// Not done: the progress deadline names the pods that are not ready.
			got := waitRollout(t, ns, "web", "Stalled naming the pending pods", func(r *rolloutsv1beta1.Rollout) bool {
				c := condition(r, rolloutsv1beta1.RolloutConditionStalled)
				return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "web-")
			})
			if got.Status.CurrentStepIndex != 1 || got.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateUpgrade {
				t.Fatalf("a stalled step moved on: %s", describe(got))
			}
			if c := condition(got, rolloutsv1beta1.RolloutConditionStalled); !strings.Contains(c.Message, "Unschedulable") {
				t.Fatalf("Stalled message %q does not say why the pods are not ready", c.Message)
			}
			if pods := podImages(t, ns, "web"); pods[v2] != 5 {
				t.Fatalf("pods by image %v, want 5 new (3 running, 2 pending)", pods)
			}
		})
	}
}

// Given a release paused at step 2 (50% of 10)
// When the Deployment is scaled to 20 through its scale subresource (as an
// HPA does)
// Then the step is re-planned from its percentage: 10 new and 10 old pods.
func TestRollout_scaledMidRelease_replansFromPercentages(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	d := getDeployment(t, ns, "web")
	scale := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, 20)
	if err := suite.c.SubResource("scale").Patch(ctxFor(t), d, client.RawPatch(types.MergePatchType, scale)); err != nil {
		t.Fatalf("scaling: %v", err)
	}
	eventually(t, "10 new and 10 old pods", func() (bool, string) {
		got := podImages(t, ns, "web")
		ro := getRollout(t, ns, "web")
		return got[v2] == 10 && got[v1] == 10 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused, fmt.Sprintf("%v %s", got, describe(ro))
	})
	assertHeld(t, ns, "web")
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
}

// Given a release paused at step 2 of 1 / 50% / 100%
// Then the new pods carry the rollout ID and their batch: 1 pod in batch 1,
// 4 in batch 2, and the pod of batch 1 keeps its batch when batch 2 is
// released.
func TestRollout_podsLabelledWithRolloutIDAndBatch(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	id := ro.Status.CanaryStatus.ObservedRolloutID
	var first string
	eventually(t, "the pod of batch 1 labelled", func() (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{rolloutsv1beta1.RolloutIDLabel: id, rolloutsv1beta1.RolloutBatchIDLabel: "1"}); err != nil {
			return false, err.Error()
		}
		if len(pods.Items) != 1 {
			return false, fmt.Sprintf("%d pods in batch 1", len(pods.Items))
		}
		first = pods.Items[0].Name
		return true, ""
	})
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	eventually(t, "pods labelled by batch, batch 1's pod still in batch 1", func() (bool, string) {
		count := map[string]int{}
		pods := &corev1.PodList{}
		if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{rolloutsv1beta1.RolloutIDLabel: id}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if p.Spec.Containers[0].Image == v2 {
				count[p.Labels[rolloutsv1beta1.RolloutBatchIDLabel]]++
			}
		}
		p := &corev1.Pod{}
		if err := suite.c.Get(ctxFor(t), client.ObjectKey{Namespace: ns, Name: first}, p); err != nil {
			return false, err.Error()
		}
		if got := p.Labels[rolloutsv1beta1.RolloutBatchIDLabel]; got != "1" {
			return false, fmt.Sprintf("pod %s of batch 1 now labelled batch %q", first, got)
		}
		return count["1"] == 1 && count["2"] == 4 && len(count) == 2, fmt.Sprintf("pods per batch %v", count)
	})
}

// Given a release of v2 paused at step 2 (5 of 10 pods) of a Rollout
// annotated rollouts.kruise.io/rollback-in-batch: "true"
// When the image is set back to v1
// Then the rollback goes through the steps, counting only the pods that
// need it: 1 of the 5, then half of them, then all.
func TestRollout_rollbackInBatch_goesThroughTheSteps(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	ro := newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil))
	ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	createRollout(t, ro)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro = waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	setImage(t, ns, "web", v1)
	for _, want := range []struct {
		step   int32
		v1, v2 int
	}{{1, 6, 4}, {2, 8, 2}} {
		waitRollout(t, ns, "web", fmt.Sprintf("rollback step %d paused", want.step), func(r *rolloutsv1beta1.Rollout) bool {
			return r.Status.CurrentStepIndex == want.step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
				r.Status.CanaryStatus.CanaryRevision != ro.Status.CanaryStatus.CanaryRevision
		})
		if got := podImages(t, ns, "web"); got[v1] != want.v1 || got[v2] != want.v2 {
			t.Fatalf("rollback step %d: pods by image %v, want %d on v1 and %d on v2", want.step, got, want.v1, want.v2)
		}
		assertHeld(t, ns, "web")
		approveByStatus(t, ns, "web")
	}
	done := waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False"
	})
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	if !strings.Contains(done.Status.Message, "in batches") {
		t.Fatalf("message %q", done.Status.Message)
	}
}

// Given a Deployment of 4 pods and a blue-green Rollout (steps 50%, 100%)
// When the image changes
// Then each step adds new pods beside all 4 old ones (never fewer than 4
// ready old pods), approvals go through status.blueGreenStatus as
// kubectl-kruise sends them, the last step (every new pod beside every old
// one) pauses too, as in OpenKruise, and the old pods go only once it is
// approved.
func TestRollout_blueGreen_newPodsBesideAllOldOnes(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	ro := newRollout(ns, "web")
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps: []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
	}}
	createRollout(t, ro)
	capacity := watchCapacity(t, ns, "web")
	setImage(t, ns, "web", v2)
	for _, want := range []struct {
		step int32
		new  int
	}{{1, 2}, {2, 4}} {
		got := waitRollout(t, ns, "web", fmt.Sprintf("blue-green step %d paused", want.step), func(r *rolloutsv1beta1.Rollout) bool {
			return r.Status.CurrentStepIndex == want.step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
		})
		if got.Status.BlueGreenStatus == nil || got.Status.CanaryStatus != nil || got.Status.BlueGreenStatus.UpdatedReadyReplicas != int32(want.new) {
			t.Fatalf("step %d status: %s", want.step, describe(got))
		}
		if pods := podImages(t, ns, "web"); pods[v1] != 4 || pods[v2] != want.new {
			t.Fatalf("step %d: pods by image %v, want all 4 old and %d new", want.step, pods, want.new)
		}
		approveBlueGreen(t, ns, "web")
	}
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	if err := capacity.within(8, 4); err != nil {
		t.Fatalf("capacity during the blue-green release: %v", err)
	}
}

// approveBlueGreen does what kubectl-kruise does for a blue-green Rollout.
func approveBlueGreen(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"blueGreenStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving through status: %v", err)
	}
}
