package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/plugin"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

const (
	v1 = "registry.example/shop/web:v1"
	v2 = "registry.example/shop/web:v2"
)

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger { return poll.Logger() }

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// sluice runs `kubectl sluice args...` in-process against the test
// cluster with the admin's kubeconfig, and returns what it printed.
func sluice(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	return run(ctxFor(t), t, args...)
}

// run runs `kubectl sluice args...` in-process until ctx ends.
func run(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out syncBuffer
	err := runTo(ctx, t, &out, args...)
	return out.String(), err
}

// runTo runs `kubectl sluice args...` in-process until ctx ends, writing
// its output to out.
func runTo(ctx context.Context, t *testing.T, out io.Writer, args ...string) error {
	t.Helper()
	var errOut bytes.Buffer
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut})
	cmd.SetArgs(append(args, "--kubeconfig", suite.kubeconfig))
	err := cmd.ExecuteContext(ctx)
	if s, ok := out.(fmt.Stringer); ok {
		t.Logf("$ kubectl sluice %s\n%s%s", strings.Join(args, " "), s, errOut.String())
	}
	return err
}

// syncBuffer is a buffer that a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mustSluice is sluice, failing the test on an error.
func mustSluice(t *testing.T, args ...string) string {
	t.Helper()
	out, err := sluice(t, args...)
	if err != nil {
		t.Fatalf("kubectl sluice %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// assertContains fails the test unless out contains every one of want,
// ignoring how many spaces align columns.
func assertContains(t *testing.T, what, out string, want ...string) {
	t.Helper()
	flat := squeeze(out)
	for _, w := range want {
		if !strings.Contains(flat, squeeze(w)) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// newNamespace creates a namespace for one test and waits for its default
// ServiceAccount.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := kube.Namespace(t, suite.c, "plugin")
	return ns
}

// eventually polls cond every 100ms until it holds, failing the test after
// two minutes with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// deployment creates a Deployment web of replicas pods running image and
// waits until they all run it.
func deployment(t *testing.T, ns string, replicas int32, image string) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
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
	waitPods(t, ns, map[string]int{image: int(replicas)})
}

// setImage sets the image of workload web of kind obj, as kubectl set
// image does.
func setImage(t *testing.T, obj client.Object, image string) {
	t.Helper()
	kube.SetImage(t, suite.c, obj, image)
}

// podImages counts the live, ready pods of app web by image.
func podImages(t *testing.T, ns string) map[string]int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out[p.Spec.Containers[0].Image]++
			}
		}
	}
	return out
}

// waitPods waits until the live, ready pods of app web are exactly want,
// by image, and no other pod exists.
func waitPods(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	eventually(t, fmt.Sprintf("pods %v", want), func() (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			return false, err.Error()
		}
		got := podImages(t, ns)
		total := 0
		for _, n := range want {
			total += n
		}
		return fmt.Sprint(got) == fmt.Sprint(want) && len(pods.Items) == total, fmt.Sprintf("ready by image %v, %d pods", got, len(pods.Items))
	})
}

// step is a canary step of replicas ("1", "50%") with a pause: nil waits
// for approval.
func step(replicas string, pause *int32) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	return rolloutsv1beta1.CanaryStep{Replicas: &r, Pause: rolloutsv1beta1.RolloutPause{Duration: pause}}
}

// createRollout creates a Rollout web of the workload kind web with strategy
// and waits until it is Healthy.
func createRollout(t *testing.T, ns, apiVersion, kind string, strategy rolloutsv1beta1.RolloutStrategy) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: apiVersion, Kind: kind, Name: "web"},
			Strategy:    strategy,
		},
	}
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	waitRollout(t, ns, "Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
}

func canary(steps ...rolloutsv1beta1.CanaryStep) rolloutsv1beta1.RolloutStrategy {
	return rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}}
}

func getRollout(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, ro); err != nil {
		t.Fatalf("reading rollout: %v", err)
	}
	return ro
}

// waitRollout waits until cond holds for the Rollout web.
func waitRollout(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	var ro *rolloutsv1beta1.Rollout
	eventually(t, "rollout "+what, func() (bool, string) {
		ro = getRollout(t, ns)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

// waitStep waits until the release of Rollout web is at step index in
// state.
func waitStep(t *testing.T, ns string, index int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, fmt.Sprintf("step %d %s", index, state), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == state
	})
}

// records reads the Rollout's record of applied approvals.
func records(t *testing.T, ro *rolloutsv1beta1.Rollout) []approval.Approval {
	t.Helper()
	r, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		t.Fatalf("approval record: %v", err)
	}
	return r
}

func condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

func revisionOf(ro *rolloutsv1beta1.Rollout) string {
	if bg := ro.Status.BlueGreenStatus; bg != nil {
		return bg.UpdatedRevision
	}
	if cs := ro.Status.CanaryStatus; cs != nil {
		return cs.CanaryRevision
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
