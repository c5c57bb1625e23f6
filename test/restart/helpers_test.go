package restart

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/poll"
)

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// eventually polls cond until it holds, failing after two minutes.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	name := "restart-" + rand.String(6)
	if err := suite.c.Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "default ServiceAccount", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	return name
}

// release is one Deployment "web" with its Rollout in a namespace.
// The workload is of kind (kindDeployment when empty); with traffic a
// Service and an HTTPRoute "web" route to it.
type release struct {
	t       *testing.T
	ns      string
	kind    string
	traffic bool
}

func newRelease(t *testing.T, replicas int32, steps ...string) *release {
	t.Helper()
	r := &release{t: t, ns: newNamespace(t), kind: kindDeployment}
	r.createDeployment(replicas)
	r.createRollout(steps, nil)
	return r
}

func (r *release) deployment() *appsv1.Deployment {
	d := &appsv1.Deployment{}
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, d); err != nil {
		r.t.Fatal(err)
	}
	return d
}

func (r *release) rollout() *rolloutsv1beta1.Rollout {
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(r.t), types.NamespacedName{Namespace: r.ns, Name: "web"}, ro); err != nil {
		r.t.Fatal(err)
	}
	return ro
}

// pods counts live pods by image.
func (r *release) pods() map[string]int {
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(r.t), pods, client.InNamespace(r.ns)); err != nil {
		r.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.Spec.Containers[0].Image]++
		}
	}
	return out
}

func (r *release) setImage(image string) {
	r.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	if err := suite.c.Patch(ctxFor(r.t), r.workloadObject(), client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		r.t.Fatal(err)
	}
}

// approve patches the status as kubectl-kruise does.
func (r *release) approve() {
	r.t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(r.t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		r.t.Fatal(err)
	}
}

func (r *release) wait(what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	r.t.Helper()
	var ro *rolloutsv1beta1.Rollout
	eventually(r.t, "rollout "+what, func() (bool, string) {
		ro = r.rollout()
		return cond(ro), fmt.Sprintf("phase %s step %d %s: %s", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	})
	return ro
}

func (r *release) waitPaused(step int32) {
	r.t.Helper()
	r.wait(fmt.Sprintf("step %d paused", step), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == step && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

func (r *release) waitCompleted(image string) *rolloutsv1beta1.Rollout {
	r.t.Helper()
	ro := r.wait("completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	r.waitComplete(image)
	return ro
}

// waitComplete waits until every pod runs image and the Deployment is
// back in Kubernetes' hands.
func (r *release) waitComplete(image string) {
	r.t.Helper()
	eventually(r.t, r.kind+" complete on "+image, func() (bool, string) {
		if r.kind == kindStatefulSet {
			return r.statefulSetComplete(image)
		}
		d := r.deployment()
		n := *d.Spec.Replicas
		pods := r.pods()
		_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		ok := !held && !d.Spec.Paused && d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == n &&
			d.Status.AvailableReplicas == n && pods[image] == int(n) && len(pods) == 1
		return ok, fmt.Sprintf("status %+v pods %v paused %v held %v", d.Status, pods, d.Spec.Paused, held)
	})
}
