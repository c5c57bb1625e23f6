package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment and its Service
// When a Rollout routes its traffic through an Ingress of a class sluice
// cannot drive (traefik), with a header-only A/B step
// Then the Rollout is refused at admission, naming the field, the value
// and the classes sluice drives: accepted, it would release the pods with
// no traffic control, showing the canary to everyone.
func TestRollout_ingressClassSluiceCannotDrive_refusedNamingTheSupportedClasses(t *testing.T) {
	ns := newNamespace(t)
	ro := trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{{
		Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{ClassType: "traefik", Name: "web"},
	}}, trafficStep("1", "", headerMatch("x-canary", "yes")), step("100%", nil))
	err := suite.c.Create(ctxFor(t), ro)
	if err == nil {
		t.Fatal("a Rollout through an Ingress class sluice cannot drive was accepted")
	}
	for _, want := range []string{"spec.strategy.canary.trafficRoutings[0].ingress.classType", `"traefik"`, "aliyun-alb", "higress", "mse", "nginx"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// Given a Deployment with the Recreate strategy and a Rollout of it
// When its image changes
// Then the update is held (paused, marked for the Rollout, no pod
// replaced) and the Rollout says why, naming spec.strategy.type, Recreate
// and the fix; once the user sets RollingUpdate, the release starts at
// step 1.
func TestRollout_recreateDeployment_heldUntilRollingUpdate(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	d := getDeployment(t, ns, "web")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if err := suite.c.Update(ctxFor(t), d); err != nil {
		t.Fatal(err)
	}
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	waitRollout(t, ns, "web", "Supported=False naming spec.strategy.type Recreate", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.strategy.type") &&
			strings.Contains(c.Message, "Recreate") && strings.Contains(c.Message, "RollingUpdate")
	})

	setImage(t, ns, "web", v2)
	if d := getDeployment(t, ns, "web"); !d.Spec.Paused || d.Annotations[rolloutsv1beta1.InProgressingAnnotation] == "" {
		t.Fatalf("the update of a Recreate Deployment was not held: paused=%v annotations=%v", d.Spec.Paused, d.Annotations)
	}
	holdsFor(t, 3*time.Second, func() string {
		if got := podImages(t, ns, "web"); got[v1] != 4 || got[v2] != 0 {
			return fmt.Sprintf("pods by image %v while blocked, want all 4 on %s", got, v1)
		}
		if d := getDeployment(t, ns, "web"); !d.Spec.Paused {
			return "the Deployment was handed back while blocked"
		}
		return ""
	})
	ro := getRollout(t, ns, "web")
	if !strings.Contains(ro.Status.Message, "spec.strategy.type") {
		t.Errorf("status message %q does not say what holds the release", ro.Status.Message)
	}

	// The fix the condition names.
	d = getDeployment(t, ns, "web")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	if err := suite.c.Update(ctxFor(t), d); err != nil {
		t.Fatalf("setting RollingUpdate: %v", err)
	}
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	eventually(t, "one pod on the new revision at step 1", func() (bool, string) {
		got := podImages(t, ns, "web")
		return got[v2] == 1 && got[v1] == 3, fmt.Sprint(got)
	})
}

// Given a release through an nginx Ingress paused at step 1 (1 new pod,
// 20% of the requests)
// When its step 2 is edited, while sluice's admission is not looking (a
// manager stopped, or a Rollout written before sluice was installed), to a
// match of two headers, which nginx cannot express, and sluice comes back
// and step 1 is approved
// Then the release is held at step 1, the workload and its routes
// untouched, and the Rollout names the step, the route and why; fixed, the
// approved release goes on to step 2.
func TestTraffic_blockedMidRelease_heldAtItsStep(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	createRollout(t, trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")},
		trafficStep("1", "20%"), trafficStep("2", "", headerMatch("user-agent", "pc")), trafficStep("100%", "100%")))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := suite.manager.Stop(); err != nil { // its webhooks go with it
		t.Fatalf("stopping sluice: %v", err)
	}
	ro := getRollout(t, ns, "web")
	match := &ro.Spec.Strategy.Canary.Steps[1].Matches[0]
	match.Headers = append(match.Headers, rolloutsv1beta1.HTTPHeaderMatch{Name: "x-team", Value: "shop"})
	err := suite.c.Update(ctxFor(t), ro)
	if startErr := startManager(ctxFor(t)); startErr != nil {
		t.Fatalf("restarting sluice: %v", startErr)
	}
	if err != nil {
		t.Fatalf("editing step 2 while sluice was stopped: %v", err)
	}
	waitRollout(t, ns, "web", "Supported=False naming steps[1]", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.strategy.canary.steps[1]") &&
			strings.Contains(c.Message, "trafficRoutings[0]")
	})
	approveByStatus(t, ns, "web")
	holdsFor(t, 5*time.Second, func() string {
		r := getRollout(t, ns, "web")
		if r.Status.CurrentStepIndex != 1 {
			return "the release moved on while blocked: " + describe(r)
		}
		if got := podImages(t, ns, "web"); got[v2] != 1 {
			return fmt.Sprintf("pods by image %v while blocked at step 1, want 1 on %s", got, v2)
		}
		return ""
	})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
	if r := getRollout(t, ns, "web"); !strings.Contains(r.Status.Message, "Held at step 1/3") {
		t.Errorf("status message %q does not say the release is held", r.Status.Message)
	}

	// The fix: one header again.
	ro = getRollout(t, ns, "web")
	ro.Spec.Strategy.Canary.Steps[1].Matches[0].Headers = ro.Spec.Strategy.Canary.Steps[1].Matches[0].Headers[:1]
	if err := suite.c.Update(ctxFor(t), ro); err != nil {
		t.Fatalf("fixing step 2: %v", err)
	}
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
}
