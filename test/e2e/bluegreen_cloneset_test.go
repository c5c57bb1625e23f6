package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// heldMinReadySeconds is the minReadySeconds of a CloneSet held for a
// blue-green release: no pod counts as available.
const heldMinReadySeconds = 2147483646

// blueGreenCloneSets is an OpenKruise CloneSet configured the way a user
// would, with every field a blue-green release changes set to its own
// value: maxSurge 25%, maxUnavailable 50%, minReadySeconds 1, no partition.
func blueGreenCloneSets() partitionKind {
	k := cloneSets
	k.spec = func(name string, replicas int32, image string) map[string]any {
		return map[string]any{
			"replicas":        int64(replicas),
			"selector":        selectorOf(name),
			"template":        podTemplate(name, image),
			"minReadySeconds": int64(1),
			"updateStrategy":  map[string]any{"type": "ReCreate", "maxUnavailable": "50%", "maxSurge": "25%"},
		}
	}
	return k
}

// blueGreenRollout is a blue-green Rollout of the CloneSet name, steps
// 50% / 100% waiting for approval; a step is done only when all its pods
// are ready.
func blueGreenRollout(k partitionKind, ns, name string) *rolloutsv1beta1.Rollout {
	ro := rolloutFor(k, ns, name)
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps:            []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
		FailureThreshold: ptr(intstr.FromInt32(0)),
	}}
	return ro
}

// startBlueGreen creates a CloneSet of 4 pods on v1 and its blue-green
// Rollout, changes the image to v2 and waits for step 1 to pause. It
// returns the CloneSet's original spec, and a monitor of its pods from
// before the image changed.
func startBlueGreen(t *testing.T, k partitionKind, ns string) (map[string]any, *podMonitor) {
	t.Helper()
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", 4, v1, 4)
	original, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, blueGreenRollout(k, ns, "app"))
	pods := watchPods(t, ns, "app", v1)
	assertHeldAt(t, k, setWorkloadImage(t, k, ns, "app", v2), k.hold)
	ro := waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if bg := ro.Status.BlueGreenStatus; bg == nil || ro.Status.CanaryStatus != nil || bg.UpdatedReplicas != 2 || bg.UpdatedReadyReplicas != 2 {
		t.Fatalf("step 1 status: %s", describe(ro))
	}
	waitPods(t, ns, "app", map[string]int{v1: 4, v2: 2})
	assertBlueGreenGate(t, k, getWorkload(t, k, ns, "app"), 2)
	if s := pods.snapshot(t); s.maxLive != 6 || s.minImageReady != 4 {
		t.Fatalf("up to step 1: up to %d pods and as few as %d ready old ones, want 6 and all 4", s.maxLive, s.minImageReady)
	}
	return original, pods
}

// assertBlueGreenGate checks a CloneSet a blue-green release holds at a
// step of surge new pods: no partition, maxSurge the step's pods,
// maxUnavailable 0, minReadySeconds inflated, marked in progress, with its
// restore patch and stable revision.
func assertBlueGreenGate(t *testing.T, k partitionKind, u *unstructured.Unstructured, surge int64) {
	t.Helper()
	if v, found := partitionOf(k, u); found {
		t.Fatalf("partition %v during the blue-green release, want none", v)
	}
	strategy, _, _ := unstructured.NestedMap(u.Object, "spec", "updateStrategy")
	minReady, _, _ := unstructured.NestedInt64(u.Object, "spec", "minReadySeconds")
	if fmt.Sprint(strategy["maxSurge"]) != fmt.Sprint(surge) || fmt.Sprint(strategy["maxUnavailable"]) != "0" || minReady != heldMinReadySeconds {
		t.Fatalf("updateStrategy %s minReadySeconds %d, want maxSurge %d, maxUnavailable 0, minReadySeconds %d",
			mustJSON(strategy), minReady, surge, heldMinReadySeconds)
	}
	a := u.GetAnnotations()
	if a[rolloutsv1beta1.InProgressingAnnotation] == "" || a[rolloutsv1beta1.DeploymentOriginalAnnotation] == "" || u.GetLabels()[rolloutsv1beta1.StableRevisionLabel] == "" {
		t.Fatalf("marks of a held CloneSet missing: annotations %v labels %v", a, u.GetLabels())
	}
}

// assertBlueGreenHandedBack checks that the CloneSet's spec, but for its
// template, is exactly original again and that it carries nothing of
// sluice's but, if labelled, the workload-type label.
func assertBlueGreenHandedBack(t *testing.T, k partitionKind, ns, name string, original map[string]any, labelled bool) {
	t.Helper()
	assertHandedBack(t, k, ns, name, original, labelled)
	spec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, name).Object, "spec")
	delete(spec, "template")
	want := map[string]any{}
	for key, v := range original {
		if key != "template" {
			want[key] = v
		}
	}
	if !equality.Semantic.DeepEqual(normalizeJSON(spec), normalizeJSON(want)) {
		t.Fatalf("spec after the release %s, want the original %s", mustJSON(spec), mustJSON(want))
	}
}

// Given a CloneSet of 4 pods (maxSurge 25%, maxUnavailable 50%,
// minReadySeconds 1) and a blue-green Rollout with steps 50% / 100%
// When the image changes
// Then step 1 runs 2 new pods beside all 4 old ones, with the CloneSet held
// at maxSurge 2, maxUnavailable 0 and an inflated minReadySeconds; the
// approval goes through status.blueGreenStatus as kubectl-kruise sends it;
// step 2 runs 4 new pods beside the 4 old ones and pauses too (the last
// step of a blue-green release waits, as in OpenKruise); and the release ends with
// only new pods and the CloneSet exactly as it was configured. Ready pods
// never fall below 4.
func TestCloneSet_blueGreen_newPodsBesideAllOldOnes(t *testing.T) {
	k := blueGreenCloneSets()
	ns := newNamespace(t)
	original, pods := startBlueGreen(t, k, ns)

	approveBlueGreen(t, ns, "app")
	waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, "app", map[string]int{v1: 4, v2: 4})
	approveBlueGreen(t, ns, "app")
	waitCompleted(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v2: 4})
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
	if s := pods.stop(t); s.maxLive != 8 || s.minReady < 4 {
		t.Fatalf("during the release: up to %d pods and as few as %d ready, want 8 (4 new beside 4 old at step 2) and never fewer than 4",
			s.maxLive, s.minReady)
	}
}

// Given a blue-green release of a CloneSet paused at step 1 (2 new pods
// beside 4 old), with or without rollouts.kruise.io/rollback-in-batch on
// the Rollout
// When the image is set back to v1
// Then the release is rolled back at once, without going through steps
// (as in OpenKruise, a blue-green release has nothing to roll back in
// batches): the 2 new pods go while the 4 old ones stay ready, and the
// CloneSet is handed back as it was.
func TestCloneSet_blueGreen_rollbackMidRelease_removesTheNewPodsAtOnce(t *testing.T) {
	for _, inBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollback-in-batch=%t", inBatch), func(t *testing.T) {
			blueGreenRollback(t, inBatch)
		})
	}
}

func blueGreenRollback(t *testing.T, inBatch bool) {
	k := blueGreenCloneSets()
	ns := newNamespace(t)
	original, pods := startBlueGreen(t, k, ns)
	if inBatch {
		if err := annotate(t, ns, "app", rolloutsv1beta1.RollbackInBatchAnnotation, "true"); err != nil {
			t.Fatalf("annotating the Rollout: %v", err)
		}
	}

	setWorkloadImage(t, k, ns, "app", v1)
	ro := waitRollout(t, ns, "app", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == corev1.ConditionFalse
	})
	if ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("rollback went through steps: %s", describe(ro))
	}
	waitPods(t, ns, "app", map[string]int{v1: 4})
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
	if s := pods.stop(t); s.maxLive != 6 || s.minImageReady != 4 {
		t.Fatalf("during the rollback: up to %d pods and as few as %d ready old ones, want 6 and all 4 kept", s.maxLive, s.minImageReady)
	}
}

// Given a blue-green release of a CloneSet paused at step 1
// When the Rollout is deleted
// Then the CloneSet is handed back exactly as it was configured (no
// workload-type label either) and its controller releases v2 to every pod.
func TestCloneSet_blueGreen_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	k := blueGreenCloneSets()
	ns := newNamespace(t)
	original, _ := startBlueGreen(t, k, ns)

	if err := suite.c.Delete(ctxFor(t), getRollout(t, ns, "app")); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v2: 4})
	assertBlueGreenHandedBack(t, k, ns, "app", original, false)
}

// Given a blue-green release of a CloneSet paused at step 1 and sluice
// stopped
// When a user applies the CloneSet's sluice.dev/restore-patch with one
// kubectl command
// Then the CloneSet is exactly as it was configured and its controller
// alone releases v2 to every pod; once sluice is back the Rollout
// completes without holding the CloneSet again.
func TestCloneSet_blueGreen_restorePatchByHand_finishesWithoutSluice(t *testing.T) {
	k := blueGreenCloneSets()
	ns := newNamespace(t)
	original, _ := startBlueGreen(t, k, ns)

	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := startManager(ctxFor(t)); err != nil {
				t.Errorf("restarting sluice: %v", err)
			}
		}
	})
	u := getWorkload(t, k, ns, "app")
	patch := u.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatalf("applying the restore patch: %v", err)
	}
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
	waitPods(t, ns, "app", map[string]int{v2: 4})

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitCompleted(t, ns, "app")
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
}

// podSample is what a podMonitor has seen so far.
type podSample struct {
	// maxLive is the most pods alive (not terminating) at once.
	maxLive int
	// minReady is the fewest ready live pods at once.
	minReady int
	// minImageReady is the fewest ready live pods of the followed image at
	// once.
	minImageReady int
}

// podMonitor follows every change of an app's pods through a watch, so it
// sees each state the pods go through, however short.
type podMonitor struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod
	seen   podSample
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

// watchPods follows the pods of app name, and among them those running
// image, until stopped.
func watchPods(t *testing.T, ns, name, image string) *podMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &podMonitor{pods: map[string]*corev1.Pod{}, cancel: cancel, done: make(chan struct{})}
	opts := metav1.ListOptions{LabelSelector: "app=" + name}
	list, err := suite.kube.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	for i := range list.Items {
		m.pods[list.Items[i].Name] = &list.Items[i]
	}
	m.seen = podSample{minReady: 1 << 30, minImageReady: 1 << 30}
	m.record(image)
	opts.ResourceVersion = list.ResourceVersion
	w, err := suite.kube.CoreV1().Pods(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatalf("watching pods: %v", err)
	}
	go func() {
		defer close(m.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				if ev.Type == watch.Error && ctx.Err() == nil {
					m.fail(fmt.Errorf("watch error: %v", ev.Object))
				}
				continue
			}
			m.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(m.pods, p.Name)
			} else {
				m.pods[p.Name] = p
			}
			m.mu.Unlock()
			m.record(image)
		}
		if ctx.Err() == nil {
			m.fail(fmt.Errorf("the watch of the pods ended early"))
		}
	}()
	t.Cleanup(func() {
		m.cancel()
		<-m.done
	})
	return m
}

// record takes the current state of the pods into the sample.
func (m *podMonitor) record(image string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	live, ready, imageReady := 0, 0, 0
	for _, p := range m.pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
				if p.Spec.Containers[0].Image == image {
					imageReady++
				}
			}
		}
	}
	m.seen.maxLive = max(m.seen.maxLive, live)
	m.seen.minReady = min(m.seen.minReady, ready)
	m.seen.minImageReady = min(m.seen.minImageReady, imageReady)
}

func (m *podMonitor) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
}

// snapshot returns what the monitor has seen so far; it fails the test
// when the watch broke.
func (m *podMonitor) snapshot(t *testing.T) podSample {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		t.Fatalf("following the pods: %v", m.err)
	}
	return m.seen
}

// stop ends the watch and returns what the monitor saw.
func (m *podMonitor) stop(t *testing.T) podSample {
	t.Helper()
	m.cancel()
	<-m.done
	return m.snapshot(t)
}

// Given a CloneSet with updateStrategy.type InPlaceOnly (which cannot run
// pods above replicas) and a blue-green Rollout of it
// When the image changes
// Then the Rollout reports Supported=False naming the update type, and the
// update stays held, no pod replaced: releasing it without the blue-green
// steps the Rollout asks for would be a silent downgrade. Once the Rollout
// is disabled, the CloneSet is handed back as configured (no partition, no
// sluice marks) and its own controller updates every pod.
func TestCloneSet_blueGreen_inPlaceOnly_reportedAndHeldUntilDisabled(t *testing.T) {
	k := blueGreenCloneSets()
	spec := k.spec
	k.spec = func(name string, replicas int32, image string) map[string]any {
		s := spec(name, replicas, image)
		s["updateStrategy"] = map[string]any{"type": "InPlaceOnly", "maxUnavailable": "50%"}
		return s
	}
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", 4, v1, 4)
	original, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, blueGreenRollout(k, ns, "app"))
	waitRollout(t, ns, "app", "Supported=False naming the update type", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.updateStrategy.type") &&
			strings.Contains(c.Message, "InPlaceOnly")
	})

	assertHeldAt(t, k, setWorkloadImage(t, k, ns, "app", v2), k.hold)
	waitRollout(t, ns, "app", "holding the update, saying why", func(r *rolloutsv1beta1.Rollout) bool {
		return strings.Contains(r.Status.Message, "Holding revision") && strings.Contains(r.Status.Message, "InPlaceOnly")
	})
	holdsFor(t, 3*time.Second, func() string {
		if got, _ := podImagesReady(t, ns, "app"); got[v1] != 4 || got[v2] != 0 {
			return fmt.Sprintf("pods by image %v while blocked, want all 4 on %s", got, v1)
		}
		return ""
	})

	ro := getRollout(t, ns, "app")
	ro.Spec.Disabled = true
	if err := suite.c.Update(ctxFor(t), ro); err != nil {
		t.Fatalf("disabling the Rollout: %v", err)
	}
	waitPods(t, ns, "app", map[string]int{v2: 4})
	eventually(t, "the CloneSet handed back", func() (bool, string) {
		u := getWorkload(t, k, ns, "app")
		_, held := u.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation]
		_, partitioned := partitionOf(k, u)
		return !held && !partitioned, fmt.Sprintf("annotations %v", u.GetAnnotations())
	})
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
}
