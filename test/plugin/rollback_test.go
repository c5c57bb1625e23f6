package plugin

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a release of a Deployment of 4 pods paused at step 1 (1 pod on v2)
// When it is rolled back with the plugin (kubectl sluice rollback, the
// alias of abort)
// Then the release is aborted: every pod runs v1 again while the
// Deployment's pod template stays v2 (it is the GitOps tool's), the
// Rollout is Aborted at step 1, recorded as the admin's abort via
// kubectl-sluice, and status says what to do; a second abort says it is
// aborted already; retry releases v2 again from step 1, and history lists
// the abort and the retry.
func TestPlugin_rollbackAtStepOne_abortsTheReleaseOnTheStableRevision(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, 4, v1)
	createRollout(t, ns, "apps/v1", "Deployment", canary(step("1", nil), step("50%", nil), step("100%", nil)))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	setImage(t, d, v2)
	ro := waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 3, v2: 1})
	stable, rev := ro.Status.CanaryStatus.StableRevision, revisionOf(ro)

	out := mustSluice(t, "rollback", "web", "-n", ns, "--reason", "5xx on checkout")
	assertContains(t, "rollback", out,
		"rollout "+ns+"/web: abort of the release of revision "+rev+" at step 1 requested (sluice.dev/abort)",
		"rollout "+ns+"/web: release of revision "+rev+" aborted at step 1 by sluice-admin via kubectl-sluice: every pod and all traffic on revision "+stable,
		"The pod template of Deployment web is left as it is.",
		"kubectl sluice retry web -n "+ns)
	waitPods(t, ns, map[string]int{v1: 4})
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != v2 {
		t.Fatalf("deployment image after the abort %s, want %s: the template is left as it is", img, v2)
	}
	ro = getRollout(t, ns)
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || ro.Status.Aborted == nil || ro.Status.Aborted.Reason != "5xx on checkout" {
		t.Fatalf("after the abort: %+v", ro.Status)
	}
	assertContains(t, "status while aborted", mustSluice(t, "status", "web", "-n", ns),
		"Phase: Aborted",
		"Aborted: revision "+rev+" at step 1 by sluice-admin via kubectl-sluice",
		"(5xx on checkout): every pod and all traffic on revision "+stable,
		"aborted 1 replicas 1",
		"Revert the commit in Git",
		"kubectl sluice retry web -n "+ns)
	assertContains(t, "get while aborted", mustSluice(t, "get", "rollouts", "-n", ns), "web Aborted 1/3 StepPaused Deployment/web "+rev)

	_, err := sluice(t, "abort", "web", "-n", ns)
	if err == nil || !strings.Contains(err.Error(), "the release of revision "+rev+" by rollout "+ns+"/web is already aborted (at step 1 by sluice-admin via kubectl-sluice)") {
		t.Fatalf("a second abort: %v", err)
	}

	assertContains(t, "retry", mustSluice(t, "retry", "web", "-n", ns),
		"rollout "+ns+"/web: retry of revision "+rev+" requested (sluice.dev/retry)",
		"rollout "+ns+"/web: releasing revision "+rev+" again from step 1")
	waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 3, v2: 1})
	assertContains(t, "history", mustSluice(t, "history", "web", "-n", ns),
		"revision "+rev+" aborted at step 1 by sluice-admin via kubectl-sluice",
		"revision "+rev+" retried from step 1 by sluice-admin via kubectl-sluice")
	_, err = sluice(t, "retry", "web", "-n", ns)
	if err == nil || !strings.Contains(err.Error(), "rollout "+ns+"/web has no aborted release (phase Progressing): nothing to retry") {
		t.Fatalf("a retry with nothing aborted: %v", err)
	}
}

// Given a StatefulSet of 4 pods released by a Rollout, paused at step 1
// (the highest ordinal on v2)
// When it is aborted with the plugin
// Then every pod runs v1 again through the partition while the template
// stays v2; then the template set back to v1 (the revert) completes the
// rollback; status and history show the pods and revisions by
// controller-revision-hash.
func TestPlugin_abortStatefulSet_thenTheRevertCompletesTheRollback(t *testing.T) {
	ns := newNamespace(t)
	replicas := int32(4)
	labels := map[string]string{"app": "web"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: v1}}},
			},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr[int32](0)},
			},
		},
	}
	if err := suite.c.Create(ctxFor(t), sts); err != nil {
		t.Fatal(err)
	}
	waitPods(t, ns, map[string]int{v1: 4})
	createRollout(t, ns, "apps/v1", "StatefulSet", canary(step("1", nil), step("100%", nil)))
	setImage(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, v2)
	ro := waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 3, v2: 1})
	stable, rev := ro.Status.CanaryStatus.StableRevision, revisionOf(ro)

	assertContains(t, "status", mustSluice(t, "status", "web", "-n", ns),
		"Workload: StatefulSet/web (apps/v1), canary in place (multi-batch)",
		"revision label controller-revision-hash",
		stable+" stable 3 3 app="+v1,
		rev+" new 1 1 app="+v2,
		"kubectl sluice approve web -n "+ns)

	out := mustSluice(t, "abort", "web", "-n", ns)
	assertContains(t, "abort", out,
		"release of revision "+rev+" aborted at step 1 by sluice-admin via kubectl-sluice: every pod and all traffic on revision "+stable,
		"The pod template of StatefulSet web is left as it is.")
	waitPods(t, ns, map[string]int{v1: 4})
	got := &appsv1.StatefulSet{}
	if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if img := got.Spec.Template.Spec.Containers[0].Image; img != v2 {
		t.Fatalf("statefulset image after the abort %s, want %s", img, v2)
	}
	setImage(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, v1)
	waitRollout(t, ns, "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == corev1.ConditionFalse
	})
	waitPods(t, ns, map[string]int{v1: 4})
	assertContains(t, "history", mustSluice(t, "history", "web", "-n", ns),
		"revision ControllerRevision "+stable+" #",
		"revision ControllerRevision "+rev+" #2 app="+v2,
		"revision "+rev+" aborted at step 1 by sluice-admin via kubectl-sluice")
}
