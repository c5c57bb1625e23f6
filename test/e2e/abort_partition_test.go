package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// partitionManifest is the Git manifest of a workload of kind k: replicas
// pods (ignored by DaemonSets) running image.
func partitionManifest(k partitionKind, ns, name string, replicas int32, image string) map[string]any {
	meta := map[string]any{"namespace": ns, "name": name}
	if k.resource != nil {
		meta["labels"] = map[string]any{rolloutsv1beta1.WorkloadTypeLabel: rolloutsv1beta1.WorkloadTypeStatefulSet}
	}
	return map[string]any{"apiVersion": k.gvk.GroupVersion().String(), "kind": k.gvk.Kind, "metadata": meta, "spec": k.spec(name, replicas, image)}
}

// workloadImage is the image of the pod template of the workload name.
func workloadImage(t *testing.T, k partitionKind, ns, name string) func() string {
	return func() string {
		containers, _, _ := unstructured.NestedSlice(getWorkload(t, k, ns, name).Object, "spec", "template", "spec", "containers")
		if len(containers) == 0 {
			return ""
		}
		image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
		return image
	}
}

// scenarioAbort:
// Given a workload of kind k on v1, applied from Git, released in steps
// 1 / 50% / 100% and paused at step 2 (half the pods on v2)
// When the release is aborted
// Then every pod runs v1 again while the pod template still says v2 (the
// partition at the hold value, the updated pods replaced within
// maxUnavailable), and the Rollout is Aborted at step 2
// When the GitOps tools apply the same commit twice (Flux server-side,
// Argo CD client-side)
// Then nothing is released again
// When it is retried
// Then v2 is released again from step 1
// When it is aborted again and Git brings v3
// Then v3 is released from step 1
// When that is aborted and the revert (v1) syncs
// Then the rollback completes at once: Healthy, Succeeded=False, every
// pod on v1 and the workload handed back as Git has it.
func scenarioAbort(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil)))
	k.rolloutCreated(t)
	git := func(image string) { applyAs(t, fluxManager, partitionManifest(k, ns, "app", replicas, image)) }
	half := (pods + 1) / 2

	git(v2)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	ro := waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, "app", map[string]int{v1: pods - half, v2: half})
	canary := ro.Status.CanaryStatus.CanaryRevision

	requestAbort(t, ns, "app")
	waitAborted(t, ns, "app", 2)
	waitPods(t, ns, "app", map[string]int{v1: pods})
	if img := workloadImage(t, k, ns, "app")(); img != v2 {
		t.Fatalf("pod template image %s after the abort, want v2 (Git's)", img)
	}
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), k.hold)

	reapplyAsGitOpsTools(t, partitionManifest(k, ns, "app", replicas, v2))
	reapplyAsGitOpsTools(t, partitionManifest(k, ns, "app", replicas, v2))
	assertStaysAborted(t, ns, "app", map[string]int{v1: pods}, workloadImage(t, k, ns, "app"), v2)
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), k.hold)

	requestRetry(t, ns, "app")
	ro = waitRollout(t, ns, "app", "v2 again at step 1", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 1 &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	if ro.Status.CanaryStatus.CanaryRevision != canary {
		t.Fatalf("retried %s, want %s", ro.Status.CanaryStatus.CanaryRevision, canary)
	}
	waitPods(t, ns, "app", map[string]int{v1: pods - 1, v2: 1})

	requestAbortAs(t, ns, "app", canary)
	waitAborted(t, ns, "app", 1)
	waitPods(t, ns, "app", map[string]int{v1: pods})
	git(v3)
	ro = waitRollout(t, ns, "app", "v3 at step 1", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && r.Status.CurrentStepIndex == 1 &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused && r.Status.CanaryStatus.CanaryRevision != canary
	})
	waitPods(t, ns, "app", map[string]int{v1: pods - 1, v3: 1})

	requestAbortAs(t, ns, "app", ro.Status.CanaryStatus.CanaryRevision)
	waitAborted(t, ns, "app", 1)
	waitPods(t, ns, "app", map[string]int{v1: pods})
	git(v1)
	waitRolledBack(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v1: pods})
	spec, _, _ := unstructured.NestedMap(partitionManifest(k, ns, "app", replicas, v1), "spec")
	assertHandedBack(t, k, ns, "app", spec, true)
}

func TestAbort_statefulSet_holdsOnStableByOrdinal(t *testing.T) {
	scenarioAbort(t, nativeStatefulSet, 4, 4)
}

func TestAbort_advancedStatefulSet_holdsOnStableByOrdinal(t *testing.T) {
	scenarioAbort(t, advancedStatefulSets("v1beta1"), 4, 4)
}

func TestAbort_cloneSet_holdsOnStable(t *testing.T) {
	scenarioAbort(t, cloneSets, 4, 4)
}

func TestAbort_customKind_holdsOnStableByOrdinal(t *testing.T) {
	scenarioAbort(t, gameServerSets, 4, 4)
}

// Given an Advanced DaemonSet released node by node, paused at step 2
// When the release is aborted
// Then its pods cannot go back to the stable revision without the pod
// template changing: the Rollout stays Aborted, reports Stalled
// (CannotHoldStable) naming the kind and the fix, and releases nothing
// further; the revert syncing then rolls it back at once.
func TestAbort_advancedDaemonSet_blocksSayingWhy(t *testing.T) {
	scenarioAbortBlocked(t, advancedDaemonSets, "DaemonSet")
}

// scenarioAbortBlocked is the abort of a workload of kind k whose kind
// cannot run the stable revision again without its template changing.
func scenarioAbortBlocked(t *testing.T, k partitionKind, kind string) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", 0, v1, 3)
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil)))
	k.rolloutCreated(t)
	applyAs(t, fluxManager, partitionManifest(k, ns, "app", 0, v2))
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, "app", map[string]int{v1: 1, v2: 2})

	requestAbort(t, ns, "app")
	ro := waitRollout(t, ns, "app", "aborted and blocked", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionStalled)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && c != nil && c.Status == "True" && c.Reason == "CannotHoldStable"
	})
	msg := condition(ro, rolloutsv1beta1.RolloutConditionStalled).Message
	for _, want := range []string{kind, "revert the commit in Git"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Stalled message %q does not name %q", msg, want)
		}
	}
	reapplyAsGitOpsTools(t, partitionManifest(k, ns, "app", 0, v2))
	holdsFor(t, 5*time.Second, func() string {
		if got, _ := podImagesReady(t, ns, "app"); got[v1] != 1 || got[v2] != 2 {
			return fmt.Sprintf("pods by image %v, want nothing more released (1 v1, 2 v2)", got)
		}
		return ""
	})
	applyAs(t, fluxManager, partitionManifest(k, ns, "app", 0, v1))
	waitRolledBack(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v1: 3})
}

// Given a blue-green release of a CloneSet paused at step 1 (2 new pods
// beside all 4 old ones)
// When it is aborted
// Then the 2 new pods go while the 4 old ones stay ready, the template
// stays v2 and the CloneSet updates no pod (the hold partition); the
// GitOps tools applying the same commit change nothing; the revert syncing
// completes the rollback and hands the CloneSet back as it was.
func TestAbort_cloneSetBlueGreen_dropsTheNewPods(t *testing.T) {
	k := blueGreenCloneSets()
	ns := newNamespace(t)
	original, pods := startBlueGreen(t, k, ns)

	requestAbort(t, ns, "app")
	waitAborted(t, ns, "app", 1)
	waitPods(t, ns, "app", map[string]int{v1: 4})
	if img := workloadImage(t, k, ns, "app")(); img != v2 {
		t.Fatalf("pod template image %s after the abort, want v2", img)
	}
	if v, _ := partitionOf(k, getWorkload(t, k, ns, "app")); fmt.Sprint(v) != "100%" {
		t.Fatalf("partition %v while aborted, want the hold 100%%", v)
	}
	reapplyAsGitOpsTools(t, partitionManifest(k, ns, "app", 4, v2))
	reapplyAsGitOpsTools(t, partitionManifest(k, ns, "app", 4, v2))
	assertStaysAborted(t, ns, "app", map[string]int{v1: 4}, workloadImage(t, k, ns, "app"), v2)
	if s := pods.stop(t); s.maxLive != 6 || s.minImageReady != 4 {
		t.Fatalf("during the abort: up to %d pods and as few as %d ready old ones, want 6 and all 4 kept", s.maxLive, s.minImageReady)
	}

	applyAs(t, fluxManager, partitionManifest(k, ns, "app", 4, v1))
	waitRolledBack(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v1: 4})
	assertBlueGreenHandedBack(t, k, ns, "app", original, true)
}
