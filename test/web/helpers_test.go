package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

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

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// eventually polls cond every 100ms until it holds, failing the test after
// two minutes with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// newNamespace creates a namespace for one test, deleted when it passes.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := kube.Namespace(t, suite.c, "web")
	return ns
}

// deployment creates a Deployment of replicas pods running image, with
// annotations, and waits until they are all available.
func deployment(t *testing.T, ns, name string, replicas int32, image string, annotations map[string]string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
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
	eventually(t, "deployment "+name+" available", func() (bool, string) {
		d := getDeployment(t, ns, name)
		pods := podImages(t, ns, name)
		return d.Status.AvailableReplicas == replicas && d.Status.UpdatedReplicas == replicas && pods[image] == int(replicas) && len(pods) == 1,
			fmt.Sprintf("status %+v pods %v", d.Status, pods)
	})
}

func getDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	return kube.Deployment(t, suite.c, ns, name)
}

// podImages counts the live pods of app name by image.
func podImages(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	return kube.PodImages(t, suite.c, ns, name)
}

// setImage updates the Deployment's image as kubectl set image does.
func setImage(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.SetImage(t, suite.c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, image)
}

// createRollout creates a multi-batch Rollout of the Deployment name with
// steps of the given replicas, each waiting for approval, and waits until
// it is Healthy.
func createRollout(t *testing.T, ns, name string, replicas ...string) {
	t.Helper()
	var steps []rolloutsv1beta1.CanaryStep
	for _, r := range replicas {
		v := intstr.Parse(r)
		steps = append(steps, rolloutsv1beta1.CanaryStep{Replicas: &v})
	}
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
	}
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	waitRollout(t, ns, name, "Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
}

// waitRollout waits until cond holds for the Rollout.
func waitRollout(t *testing.T, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	eventually(t, "rollout "+what, func() (bool, string) {
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
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

// approve approves up to step of the revision being released through the
// sluice.dev/approve annotation, as kubectl annotate does.
func approve(t *testing.T, ns, name, revision string, step int) {
	t.Helper()
	v := fmt.Sprintf("step=%d,revision=%s", step, revision)
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rolloutsv1beta1.ApproveAnnotation: v}}})
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, b), client.FieldOwner("kubectl-annotate")); err != nil {
		t.Fatalf("approving step %d: %v", step, err)
	}
}
