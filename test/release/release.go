// Package release starts the release the analysis and notification stories
// need: a Deployment of two pods and a Rollout of it whose first step
// releases one pod and waits for an approval, then a new image, waited on
// until the release is paused at step 1.
package release

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// App creates, in a new namespace named prefix-<random>, a Deployment
// app:v1 of two pods and a Rollout of it labelled app=<name> in two steps
// (one pod, paused for an approval; then all of them), and waits until the
// Rollout is Healthy.
func App(t *testing.T, c client.Client, prefix, name string) (ns string, d *appsv1.Deployment) {
	t.Helper()
	ns = kube.Namespace(t, c, prefix)
	labels := map[string]string{"app": name}
	d = &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: kube.Container, Image: "app:v1"}}},
			},
		},
	}
	if err := c.Create(poll.Context(t), d); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
	kube.WaitDeploymentComplete(t, c, ns, name, "app:v1")
	one, all := intstr.FromInt32(1), intstr.FromString("100%")
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &one}, {Replicas: &all},
			}}},
		},
	}
	if err := c.Create(poll.Context(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	Wait(t, c, ns, name, "Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	return ns, d
}

// PausedAtStep1 is App, then the image app:v2, waited on until the
// release is paused at step 1.
func PausedAtStep1(t *testing.T, c client.Client, prefix, name string) (ns string, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	ns, d := App(t, c, prefix, name)
	kube.SetImage(t, c, d, "app:v2")
	return ns, Wait(t, c, ns, name, "paused at step 1", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// Wait waits until cond holds for the Rollout ns/name.
func Wait(t *testing.T, c client.Reader, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	poll.Until(t, "rollout "+name+" "+what, func() (bool, string) {
		if err := c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}
