package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// The two revisions of the scenarios.
const (
	v1 = "registry.example/web:v1"
	v2 = "registry.example/web:v2"
)

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// eventually polls cond until it holds, failing the test after poll's
// deadline with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// retry calls f every 200ms until it succeeds, for at most a minute.
func retry(ctx context.Context, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// newNamespace creates a namespace for one scenario and waits for its
// default ServiceAccount; it is deleted when the scenario passes.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := kube.Namespace(t, suite.c, "dp")
	return ns
}

// deployment creates a Deployment of replicas pods running image and waits
// until they are all available.
func deployment(t *testing.T, ns, name string, replicas int32, image string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: image, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: podPort}},
				}}},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), d); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
	waitDeploymentComplete(t, ns, name, image)
}

// waitDeploymentComplete waits until every pod of the Deployment runs image
// and is available.
func waitDeploymentComplete(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.WaitDeploymentComplete(t, suite.c, ns, name, image)
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

// rollout creates a canary-style Rollout of the Deployment name routing
// through the HTTPRoute name (grace period 1s), and waits until it is
// Healthy.
func rollout(t *testing.T, ns, name string, steps ...rolloutsv1beta1.CanaryStep) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
				Steps:                        steps,
				EnableExtraWorkloadForCanary: true,
				TrafficRoutings: []rolloutsv1beta1.TrafficRoutingRef{{
					Service:            name,
					GracePeriodSeconds: 1,
					Gateway:            &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &name},
				}},
			}},
		},
	}
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	waitRollout(t, ns, name, "Healthy", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
}

// step is a step of replicas pods, traffic (empty: none) and matches,
// waiting for approval.
func step(replicas, traffic string, matches ...rolloutsv1beta1.HttpRouteMatch) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	s := rolloutsv1beta1.CanaryStep{Replicas: &r}
	s.Matches = matches
	if traffic != "" {
		s.Traffic = &traffic
	}
	return s
}

// headerMatch matches requests whose header name is value.
func headerMatch(name, value string) rolloutsv1beta1.HttpRouteMatch {
	return rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: name, Value: value}}}
}

// waitRollout waits until cond holds for the Rollout.
func waitRollout(t *testing.T, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) {
	t.Helper()
	eventually(t, "rollout "+what, func() (bool, string) {
		ro := &rolloutsv1beta1.Rollout{}
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
			return false, err.Error()
		}
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
}

// waitStep waits until the release is at step index in state.
func waitStep(t *testing.T, ns, name string, index int32, state rolloutsv1beta1.CanaryStepState) {
	t.Helper()
	waitRollout(t, ns, name, fmt.Sprintf("step %d %s", index, state), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == state
	})
}

// approve does what `kubectl-kruise rollout approve` does.
func approve(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving: %v", err)
	}
}
