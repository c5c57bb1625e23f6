package daemonset

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a DaemonSet release paused at step 2 of 3 (3 new pods, 3 old)
// When the release is aborted (sluice.dev/abort=true)
// Then a DaemonSet cannot get pods of its stable revision back without its
// pod template changing, which sluice never does: the Rollout is Aborted
// and Stalled (CannotHoldStable), naming the kind and the fix; nothing more
// is released, also when the same template is applied again
// When the template is set back to the stable revision (the revert syncs)
// Then the rollback completes at once and the DaemonSet is handed back.
func TestDaemonSet_abort_blocksSayingWhyUntilTheRevert(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("50%"), step("100%")))
	setImage(t, ns, "agent", v2)
	waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "agent")
	waitStep(t, ns, "agent", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 3 || got[v1] != 3 {
		t.Fatalf("step 2: pods by image %v, want 3 new and 3 old", got)
	}

	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rolloutsv1beta1.AbortAnnotation: "true"}}})
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}}
	if err := suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, b), client.FieldOwner("kubectl-annotate")); err != nil {
		t.Fatal(err)
	}
	ro = waitRollout(t, ns, "agent", "aborted and blocked", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionStalled)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && c != nil && c.Status == "True" && c.Reason == "CannotHoldStable"
	})
	msg := condition(ro, rolloutsv1beta1.RolloutConditionStalled).Message
	for _, want := range []string{"DaemonSet", "revert the commit in Git"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Stalled message %q does not name %q", msg, want)
		}
	}
	assertHeld(t, ns, "agent")
	setImage(t, ns, "agent", v2) // the same template applied again
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := podImages(t, ns, "agent"); got[v2] != 3 || got[v1] != 3 {
			t.Fatalf("pods by image %v while aborted, want nothing more released", got)
		}
		if r := getRollout(t, ns, "agent"); r.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
			t.Fatalf("no longer aborted: %s", describe(r))
		}
		time.Sleep(200 * time.Millisecond)
	}

	setImage(t, ns, "agent", v1)
	ro = waitCompleted(t, ns, "agent", "False")
	if ro.Status.Aborted != nil {
		t.Fatalf("still aborted after the rollback: %s", describe(ro))
	}
	waitDaemonSetComplete(t, ns, "agent", v1)
	assertRestored(t, ns, "agent")
	if !strings.Contains(ro.Status.Message, "aborted by sluice-admin via annotation at step 2") {
		t.Fatalf("message %q does not say the release was aborted at step 2", ro.Status.Message)
	}
}
