package daemonset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

const (
	v1 = "registry.example/shop/agent:v1"
	v2 = "registry.example/shop/agent:v2"
	v3 = "registry.example/shop/agent:v3"
)

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger { return poll.Logger() }

func ctxFor(t *testing.T) context.Context { return poll.Context(t) }

// newNamespace creates a namespace for one scenario and waits for its
// default ServiceAccount.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := kube.Namespace(t, suite.c, "e2e-ds")
	dumpOnFailure(t, ns)
	return ns
}

// eventually polls cond every 100ms until it holds, failing the test after
// two minutes with cond's last description of what it saw.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, cond)
}

// daemonSet creates a DaemonSet running image with maxUnavailable 2 and
// waits until it runs an available pod on every node.
func daemonSet(t *testing.T, ns, name, image string) {
	t.Helper()
	labels := map[string]string{"app": name}
	two, zero := intstr.FromInt32(2), intstr.FromInt32(0)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &two, MaxSurge: &zero},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), ds); err != nil {
		t.Fatalf("creating daemonset: %v", err)
	}
	waitDaemonSetComplete(t, ns, name, image)
}

// waitDaemonSetComplete waits until every node runs one available pod of
// image and the DaemonSet controller reports them all updated.
func waitDaemonSetComplete(t *testing.T, ns, name, image string) {
	t.Helper()
	eventually(t, "daemonset "+name+" complete on "+image, func() (bool, string) {
		ds := getDaemonSet(t, ns, name)
		pods := podImages(t, ns, name)
		s := ds.Status
		ok := s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled == nodes &&
			s.UpdatedNumberScheduled == nodes && s.NumberAvailable == nodes && pods[image] == nodes && len(pods) == 1
		return ok, fmt.Sprintf("status %+v pods %v strategy %s", s, pods, ds.Spec.UpdateStrategy.Type)
	})
}

func getDaemonSet(t *testing.T, ns, name string) *appsv1.DaemonSet {
	t.Helper()
	ds := &appsv1.DaemonSet{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ds); err != nil {
		t.Fatalf("reading daemonset: %v", err)
	}
	return ds
}

// podImages counts the live (not terminating) pods of app name by image.
func podImages(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	return kube.PodImages(t, suite.c, ns, name)
}

// setImage updates the DaemonSet's image as a user would (kubectl set
// image): a patch of the object.
func setImage(t *testing.T, ns, name, image string) {
	t.Helper()
	kube.SetImage(t, suite.c, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, image)
}

// newRollout builds a Rollout of the DaemonSet name with steps.
func newRollout(ns, name string, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: steps}},
		},
	}
}

// step is a canary step of replicas ("1", "50%") that waits for approval.
func step(replicas string) rolloutsv1beta1.CanaryStep {
	r := intstr.Parse(replicas)
	return rolloutsv1beta1.CanaryStep{Replicas: &r}
}

// createRollout creates ro and waits until it is Healthy and has labelled
// its DaemonSet, so that the webhook sees the DaemonSet's updates.
func createRollout(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
	waitRollout(t, ro.Namespace, ro.Name, "Healthy and the DaemonSet labelled", func(r *rolloutsv1beta1.Rollout) bool {
		ds := getDaemonSet(t, ro.Namespace, ro.Spec.WorkloadRef.Name)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ds.Labels[rolloutsv1beta1.WorkloadTypeLabel] == "daemonset"
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

// waitCompleted waits until the release is over with Succeeded set to
// succeeded ("True", or "False" after a rollback).
func waitCompleted(t *testing.T, ns, name, succeeded string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return waitRollout(t, ns, name, "completed with Succeeded="+succeeded, func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && string(c.Status) == succeeded
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

func condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

// assertHeld checks a DaemonSet that a release holds: OnDelete, marked for
// the Rollout, with a restore patch giving back its RollingUpdate strategy.
func assertHeld(t *testing.T, ns, name string) {
	t.Helper()
	ds := getDaemonSet(t, ns, name)
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		t.Fatalf("held daemonset has strategy %s, want OnDelete", ds.Spec.UpdateStrategy.Type)
	}
	if got := ds.Annotations[rolloutsv1beta1.InProgressingAnnotation]; got != `{"rolloutName":"`+name+`"}` {
		t.Fatalf("held daemonset: %s is %q", rolloutsv1beta1.InProgressingAnnotation, got)
	}
	var patch struct {
		Spec struct {
			UpdateStrategy appsv1.DaemonSetUpdateStrategy `json:"updateStrategy"`
		} `json:"spec"`
	}
	raw := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := json.Unmarshal([]byte(raw), &patch); err != nil {
		t.Fatalf("held daemonset: restore patch %q: %v", raw, err)
	}
	if s := patch.Spec.UpdateStrategy; s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable.String() != "2" || s.RollingUpdate.MaxSurge.String() != "0" {
		t.Fatalf("held daemonset: restore patch %s does not give back RollingUpdate 2/0", raw)
	}
}

// assertRestored checks that a DaemonSet has exactly its own strategy back
// and carries nothing of sluice's but the workload-type label.
func assertRestored(t *testing.T, ns, name string) {
	t.Helper()
	ds := getDaemonSet(t, ns, name)
	s := ds.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable.String() != "2" || s.RollingUpdate.MaxSurge.String() != "0" {
		t.Errorf("strategy not restored: %+v", s)
	}
	for k := range ds.Annotations {
		if strings.HasPrefix(k, "sluice.dev/") || strings.HasPrefix(k, "rollouts.kruise.io/") || strings.HasPrefix(k, "batchrelease.") {
			t.Errorf("annotation %s left on the daemonset", k)
		}
	}
	if _, ok := ds.Labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		t.Errorf("label %s left on the daemonset", rolloutsv1beta1.StableRevisionLabel)
	}
}

// availabilityMonitor follows the pods of an app through a watch during a
// release and records the most nodes that lacked a ready, live pod at once:
// what a DaemonSet's maxUnavailable bounds. A watch sees every change the
// API server makes, in order, however briefly a node is without its pod.
type availabilityMonitor struct {
	mu             sync.Mutex
	maxUnavailable int
	events         int
	err            error
	cancel         context.CancelFunc
	done           chan struct{}
}

// watchAvailability follows the app's pods until stopped.
func watchAvailability(t *testing.T, ns, app string) *availabilityMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &availabilityMonitor{cancel: cancel, done: make(chan struct{})}
	wc, err := client.NewWithWatch(suite.cfg, client.Options{Scheme: suite.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	list := &corev1.PodList{}
	sel := []client.ListOption{client.InNamespace(ns), client.MatchingLabels{"app": app}}
	if err := wc.List(ctx, list, sel...); err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.PodList{}, append(sel, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})...)
	if err != nil {
		t.Fatal(err)
	}
	serving := map[string]string{} // pod name -> node, for live ready pods
	for i := range list.Items {
		if p := &list.Items[i]; p.DeletionTimestamp == nil && isReady(p) {
			serving[p.Name] = p.Spec.NodeName
		}
	}
	go func() {
		defer close(m.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					m.mu.Lock()
					m.err = fmt.Errorf("watch ended early")
					m.mu.Unlock()
					return
				}
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod {
					continue
				}
				delete(serving, p.Name)
				if ev.Type != watch.Deleted && p.DeletionTimestamp == nil && isReady(p) {
					serving[p.Name] = p.Spec.NodeName
				}
				ready := map[string]bool{}
				for _, node := range serving {
					ready[node] = true
				}
				m.mu.Lock()
				m.maxUnavailable = max(m.maxUnavailable, nodes-len(ready))
				m.events++
				m.mu.Unlock()
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *availabilityMonitor) stop() {
	m.cancel()
	<-m.done
}

// within checks that at most maxUnavailable nodes lacked a ready pod.
func (m *availabilityMonitor) within(maxUnavailable int) error {
	m.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if m.events == 0 {
		return fmt.Errorf("no pod events seen")
	}
	if m.maxUnavailable > maxUnavailable {
		return fmt.Errorf("saw %d nodes without a ready pod at once (bound %d)", m.maxUnavailable, maxUnavailable)
	}
	return nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// dumpOnFailure logs the release-relevant objects of ns when t fails.
func dumpOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		lists := []client.ObjectList{&appsv1.DaemonSetList{}, &appsv1.ControllerRevisionList{}, &corev1.PodList{},
			&rolloutsv1beta1.RolloutList{}, &rolloutsv1beta1.BatchReleaseList{}}
		for _, l := range lists {
			if err := suite.c.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Logf("listing %T: %v", l, err)
				continue
			}
			b, _ := json.MarshalIndent(l, "", " ")
			t.Logf("%T:\n%s", l, b)
		}
	})
}
