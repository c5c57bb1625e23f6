package helm

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// eventually polls cond every 100ms until it holds, failing the test after
// two minutes with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// apply applies every object with server-side apply, as helm would create
// them, or only dry-runs it.
func apply(t *testing.T, objs rendered, dryRun bool) {
	t.Helper()
	for _, o := range objs {
		opts := []client.PatchOption{client.FieldOwner("helm"), client.ForceOwnership}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		obj := o.DeepCopy()
		if err := suite.c.Patch(ctxFor(t), obj, client.Apply, opts...); err != nil { //nolint:staticcheck // apply of whole unstructured objects
			t.Fatalf("applying %s %s (dry run %v): %v", o.GetKind(), o.GetName(), dryRun, err)
		}
	}
}

// withoutKind returns the objects but those of kind.
func (r rendered) withoutKind(kind string) rendered {
	var out rendered
	for _, o := range r {
		if o.GetKind() != kind {
			out = append(out, o)
		}
	}
	return out
}

// onlyKind returns the objects of kind.
func (r rendered) onlyKind(kind string) rendered {
	var out rendered
	for _, o := range r {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// createDeployment creates a Deployment of replicas pods of app name
// running image, and waits until they are available.
func createDeployment(t *testing.T, ns, name string, replicas int32, image string) {
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
	waitPods(t, ns, name, map[string]int{image: int(replicas)})
}

// podImages counts the live pods of app name by image.
func podImages(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	return kube.PodImages(t, suite.c, ns, name)
}

// waitPods waits until the live pods of app name run exactly want.
func waitPods(t *testing.T, ns, name string, want map[string]int) {
	t.Helper()
	eventually(t, fmt.Sprintf("pods %v", want), func() (bool, string) {
		got := podImages(t, ns, name)
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
}

func getDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	return kube.Deployment(t, suite.c, ns, name)
}

func setImage(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.SetImage(t, suite.c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, image)
}

// newRollout is a Rollout of Deployment name: half the pods, an approval,
// then all of them.
func newRollout(ns, name string) *rolloutsv1beta1.Rollout {
	half, all := intstr.FromString("50%"), intstr.FromString("100%")
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &half}, {Replicas: &all},
			}}},
		},
	}
}

// waitRollout waits until cond holds for the Rollout.
func waitRollout(t *testing.T, ns, name, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	eventually(t, "rollout "+what, func() (bool, string) {
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
			return false, err.Error()
		}
		return cond(ro), fmt.Sprintf("%+v", ro.Status)
	})
	return ro
}

// approve does what kubectl-kruise rollout approve does.
func approve(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving: %v", err)
	}
}

// sluiceMarks lists what sluice put on the Deployment: annotations and
// labels of its prefixes but the workload-type label.
func sluiceMarks(d *appsv1.Deployment) []string {
	var out []string
	for k := range d.Annotations {
		if strings.HasPrefix(k, "sluice.dev/") || strings.HasPrefix(k, "rollouts.kruise.io/") || strings.HasPrefix(k, "batchrelease.") {
			out = append(out, "annotation "+k)
		}
	}
	if _, ok := d.Labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		out = append(out, "label "+rolloutsv1beta1.StableRevisionLabel)
	}
	return out
}

// v1alpha1Rollout reads the Rollout through the v1alpha1 API, which the
// API server converts through sluice's conversion webhook.
func v1alpha1Rollout(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("rollouts.kruise.io/v1alpha1")
	u.SetKind("Rollout")
	err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
	return u, err
}
