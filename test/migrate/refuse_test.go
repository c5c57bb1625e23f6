package migrate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// Given a Deployment OpenKruise Rollouts left held in place mid-release
// (Recreate, paused, 1 new pod beside 3 old ones) whose annotation
// rollouts.kruise.io/deployment-strategy keeps no rollingUpdate, and its
// Rollout
// When sluice runs
// Then it does not release the Deployment, and never hands it back as
// Recreate: the Rollout's Supported condition says why and gives the
// kubectl command that sets the strategy, and the Deployment stays paused
// with its pods as they were; once the strategy is set as it says, the
// release goes on and the Deployment ends on the new revision with that
// strategy.
func TestMigrate_deploymentLeftRecreateWithoutItsStrategy_refusedSayingHow(t *testing.T) {
	ctx := poll.Context(t)
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(suite.cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
		t.Fatal(err)
	}
	ns := kube.Namespace(t, c, "migrate-refuse")
	heldDeploymentKeeping(t, c, ns, "api", `{"rollingStyle":"Partition","paused":false,"partition":1}`)
	one, half, all := intstr.FromInt32(1), intstr.FromString("50%"), intstr.FromString("100%")
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
				Steps: []rolloutsv1beta1.CanaryStep{{Replicas: &one}, {Replicas: &half}, {Replicas: &all}},
			}},
		},
	}
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-migrate-refuse", Logger: poll.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	if err := c.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}

	var fix string
	poll.Until(t, "the Rollout saying why the Deployment is not released", func() (bool, string) {
		ro := getRollout(t, c, ns, "api")
		for _, cond := range ro.Status.Conditions {
			if cond.Type == rolloutsv1beta1.RolloutConditionSupported && cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "Recreate") {
				if i := strings.Index(cond.Message, "kubectl patch deployment api"); i >= 0 {
					fix = cond.Message[i:]
					return true, cond.Message
				}
			}
		}
		return false, fmt.Sprintf("phase %s conditions %+v", ro.Status.Phase, ro.Status.Conditions)
	})
	t.Logf("the fix given: %s", fix)
	// Held as OpenKruise left it: never handed back as Recreate.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); <-tick.C {
		d := kube.Deployment(t, c, ns, "api")
		pods := kube.PodImages(t, c, ns, "api")
		if !d.Spec.Paused || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || pods[v1] != 3 || pods[v2] != 1 {
			t.Fatalf("the refused Deployment changed: paused %v strategy %s pods %v", d.Spec.Paused, d.Spec.Strategy.Type, pods)
		}
	}

	// The user sets the strategy as the message says; the release goes on.
	mergePatch(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}},
		`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`)
	for step := int32(1); step <= 2; step++ {
		waitStep(t, c, ns, "api", step, rolloutsv1beta1.CanaryStepStatePaused)
		approve(t, c, ns, "api")
	}
	poll.Until(t, "the release completed", func() (bool, string) {
		ro := getRollout(t, c, ns, "api")
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted, ro.Status.Message
	})
	kube.WaitDeploymentComplete(t, c, ns, "api", v2)
	d := kube.Deployment(t, c, ns, "api")
	if ru := d.Spec.Strategy.RollingUpdate; d.Spec.Paused || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxSurge.String() != "25%" {
		t.Errorf("Deployment handed back paused=%v strategy %+v, want RollingUpdate 25%%/25%%", d.Spec.Paused, d.Spec.Strategy)
	}
}
