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
// When it is rolled back with the plugin
// Then the Deployment's pod template is the stable ReplicaSet's again at
// once, sluice rolls back without going through the steps, the Rollout
// ends Healthy with Succeeded=False, every pod runs v1, the Deployment is
// handed back, and a second rollback finds nothing to roll back.
func TestPlugin_rollbackAtStepOne_deploymentBackOnTheStableRevision(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, 4, v1)
	createRollout(t, ns, "apps/v1", "Deployment", canary(step("1", nil), step("50%", nil), step("100%", nil)))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	setImage(t, d, v2)
	ro := waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 3, v2: 1})
	stable := ro.Status.CanaryStatus.StableRevision

	out := mustSluice(t, "rollback", "web", "-n", ns)
	assertContains(t, "rollback", out,
		"rollout "+ns+"/web: rolled Deployment "+ns+"/web back to the stable revision "+stable+" (pod template of ReplicaSet web-"+stable+", revision #1):",
		"container app: image "+v2+" -> "+v1,
		"sluice rolls the release back at once; follow it with kubectl sluice status web -n "+ns+" --watch")
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != v1 {
		t.Fatalf("deployment image after rollback %s, want %s", img, v1)
	}
	if _, ok := d.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		t.Fatalf("rollback copied the pod-template-hash label into the deployment: %v", d.Spec.Template.Labels)
	}

	ro = waitRollout(t, ns, "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == corev1.ConditionFalse
	})
	if ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("the rollback went through the steps: at step %d", ro.Status.CurrentStepIndex)
	}
	waitPods(t, ns, map[string]int{v1: 4})
	eventually(t, "deployment handed back", func() (bool, string) {
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		_, restore := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		return !d.Spec.Paused && !restore, "paused " + strings.Repeat("yes", btoi(d.Spec.Paused))
	})
	assertContains(t, "status after the rollback", mustSluice(t, "status", "web", "-n", ns),
		"Phase: Healthy", "Succeeded=False (RolledBack): Rolled back to revision "+stable)

	_, err := sluice(t, "abort", "web", "-n", ns)
	if err == nil || !strings.Contains(err.Error(), "rollout "+ns+"/web has no release in progress (phase Healthy): nothing to roll back") {
		t.Fatalf("a second rollback: %v", err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Given a StatefulSet of 4 pods released by a Rollout, paused at step 1
// (the highest ordinal on v2)
// When it is rolled back with the plugin
// Then its pod template is set back from the stable revision's
// ControllerRevision, sluice rolls back, every pod runs v1, and status and
// history show the pods and revisions by controller-revision-hash.
func TestPlugin_rollbackStatefulSet_templateFromTheControllerRevision(t *testing.T) {
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

	out := mustSluice(t, "rollback", "web", "-n", ns)
	assertContains(t, "rollback", out,
		"rolled StatefulSet "+ns+"/web back to the stable revision "+stable+" (pod template of ControllerRevision "+stable+", revision #1):",
		"container app: image "+v2+" -> "+v1)
	waitRollout(t, ns, "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == corev1.ConditionFalse
	})
	waitPods(t, ns, map[string]int{v1: 4})
	got := &appsv1.StatefulSet{}
	if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if img := got.Spec.Template.Spec.Containers[0].Image; img != v1 {
		t.Fatalf("statefulset image after rollback %s, want %s", img, v1)
	}
	assertContains(t, "history", mustSluice(t, "history", "web", "-n", ns),
		"revision ControllerRevision "+stable+" #",
		"revision ControllerRevision "+rev+" #2 app="+v2,
		"event Warning RolledBack: Pod template reverted to stable revision "+stable)
}
