package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger { return poll.Logger() }

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// newNamespace creates a namespace for one scenario and waits for its
// default ServiceAccount.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := kube.Namespace(t, suite.c, "e2e")
	dumpOnFailure(t, ns)
	return ns
}

// eventually polls cond every 100ms until it holds, failing the test after
// two minutes with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// deployment creates a Deployment of replicas pods running image and waits
// until they are all available.
func deployment(t *testing.T, ns, name string, replicas int32, image string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), d); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
	waitDeploymentComplete(t, ns, name, image)
	return d
}

// waitDeploymentComplete waits until every pod of the Deployment runs image
// and is available, and Kubernetes reports the rollout complete.
func waitDeploymentComplete(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.WaitDeploymentComplete(t, suite.c, ns, name, image)
}

func getDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	return kube.Deployment(t, suite.c, ns, name)
}

// podImages counts the live (not terminating) pods of app name by image.
func podImages(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	return kube.PodImages(t, suite.c, ns, name)
}

// setImage updates the Deployment's image as a user would (kubectl set
// image): an update of the whole object.
func setImage(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.SetImage(t, suite.c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, image)
}

// newRollout builds a Rollout of the Deployment name with steps.
func newRollout(ns, name string, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
	}
}

// step is a canary step of replicas ("1", "50%") with a pause: nil waits
// for approval.
func step(replicas string, pause *int32) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	return rolloutsv1beta1.CanaryStep{Replicas: &r, Pause: rolloutsv1beta1.RolloutPause{Duration: pause}}
}

func createRollout(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	waitRollout(t, ro.Namespace, ro.Name, "Healthy", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
}

func getRollout(t *testing.T, ns, name string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		t.Fatalf("reading rollout: %v", err)
	}
	return ro
}

// waitRollout waits until cond holds for the Rollout.
func waitRollout(t *testing.T, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	var ro *rolloutsv1beta1.Rollout
	eventually(t, "rollout "+what, func() (bool, string) {
		ro = getRollout(t, ns, name)
		return cond(ro), describe(ro)
	})
	return ro
}

// waitStep waits until the release is at step index in state.
func waitStep(t *testing.T, ns, name string, index int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, fmt.Sprintf("step %d %s", index, state), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == state
	})
}

func describe(ro *rolloutsv1beta1.Rollout) string {
	b, _ := json.Marshal(ro.Status)
	return string(b)
}

// approveByStatus does what `kubectl-kruise rollout approve` does: a merge
// patch of the status subresource setting currentStepState to StepReady.
func approveByStatus(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving through status: %v", err)
	}
}

// annotate sets one annotation on the Rollout, as kubectl annotate does.
func annotate(t *testing.T, ns, name, key, value string) error {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, b), client.FieldOwner("kubectl-annotate"))
}

// assertHeld checks the state of a Deployment that sluice holds between
// batches: paused, still RollingUpdate, and fixable by Kubernetes alone.
func assertHeld(t *testing.T, ns, name string) {
	t.Helper()
	d := getDeployment(t, ns, name)
	if !d.Spec.Paused || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Fatalf("deployment between batches: paused=%v strategy=%s", d.Spec.Paused, d.Spec.Strategy.Type)
	}
	if _, ok := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok {
		t.Fatalf("deployment between batches has no %s annotation", rolloutsv1beta1.DeploymentOriginalAnnotation)
	}
}

// assertRestored checks that a Deployment carries nothing of sluice's but
// the workload-type label, and its original strategy.
func assertRestored(t *testing.T, ns, name string) {
	t.Helper()
	d := getDeployment(t, ns, name)
	if d.Spec.Paused {
		t.Errorf("deployment still paused")
	}
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil ||
		ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" {
		t.Errorf("strategy not restored: %+v", d.Spec.Strategy)
	}
	if d.Spec.MinReadySeconds != 0 || d.Spec.ProgressDeadlineSeconds == nil || *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("timing not restored: minReadySeconds=%d progressDeadlineSeconds=%v", d.Spec.MinReadySeconds, d.Spec.ProgressDeadlineSeconds)
	}
	for k := range d.Annotations {
		if strings.HasPrefix(k, "sluice.dev/") || strings.HasPrefix(k, "rollouts.kruise.io/") || strings.HasPrefix(k, "batchrelease.") {
			t.Errorf("annotation %s left on the deployment", k)
		}
	}
	if _, ok := d.Labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		t.Errorf("label %s left on the deployment", rolloutsv1beta1.StableRevisionLabel)
	}
}

func condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
