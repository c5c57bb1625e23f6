package e2e

import (
	"strings"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment of 10 pods and a Rollout whose steps must be ready
// within 3 seconds, aborting when they are not
// (sluice.dev/on-progress-deadline: abort)
// When a new revision of which only 3 pods can run asks for 5 at step 1
// Then the release aborts by itself, recorded as the progress deadline's
// and naming the pods: every pod is back on the stable revision (10 of
// v1) and stays there, and the pod template keeps the new revision, as the
// GitOps tool applied it.
func TestRollout_progressDeadlineWithAbort_abortsToStableByItself(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	ro := newRollout(ns, "web", step("50%", nil), step("100%", nil))
	ro.Annotations = map[string]string{rolloutsv1beta1.ProgressDeadlineAnnotation: "3s", "sluice.dev/on-progress-deadline": "abort"}
	createRollout(t, ro)
	unschedulableBeyondNodes(t, ns, "web")

	got := waitRollout(t, ns, "web", "aborted by the progress deadline and held", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
	if ab := got.Status.Aborted; ab.Via != "progress-deadline" || ab.By != "sluice" || ab.Step != 1 || !strings.Contains(ab.Reason, "web-") {
		t.Fatalf("abort record %+v, want step 1 by sluice via progress-deadline naming the pods", ab)
	}
	assertStaysAborted(t, ns, "web", map[string]int{v1: 10}, deploymentImage(t, ns, "web"), v2)
}
