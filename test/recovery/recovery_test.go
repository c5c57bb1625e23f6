package recovery

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/plugin"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// heldMinReadySeconds is the minReadySeconds sluice gives a Deployment
// while a batch moves (workload/deployment).
const heldMinReadySeconds = math.MaxInt32 - 1

// recoveryScript is the recovery docs/recovery.md documents for a
// Deployment released with a stable Service and no route, in plain kubectl:
// the Service first (sluice narrowed its selector to the stable
// revision's pod-template-hash, which would select nothing once Kubernetes
// finishes), then the canary Ingress and the canary Service, then the
// Deployment by its restore patch. NS, SERVICE, INGRESS and DEPLOYMENT are
// set by the caller.
const recoveryScript = `set -eu
kubectl -n "$NS" patch service "$SERVICE" --type merge -p '{"spec":{"selector":{"pod-template-hash":null}},"metadata":{"annotations":{"sluice.dev/original-selector":null}}}'
kubectl -n "$NS" delete ingress "$INGRESS-canary" --ignore-not-found
kubectl -n "$NS" delete service "$SERVICE-canary" --ignore-not-found
kubectl -n "$NS" patch deployment "$DEPLOYMENT" --type merge -p "$(kubectl -n "$NS" get deployment "$DEPLOYMENT" -o jsonpath='{.metadata.annotations.sluice\.dev/restore-patch}')"
`

// resumeScript is the documented alternative between batches: the Service
// as above, then kubectl rollout resume.
const resumeScript = `set -eu
kubectl -n "$NS" patch service "$SERVICE" --type merge -p '{"spec":{"selector":{"pod-template-hash":null}},"metadata":{"annotations":{"sluice.dev/original-selector":null}}}'
kubectl -n "$NS" delete ingress "$INGRESS-canary" --ignore-not-found
kubectl -n "$NS" delete service "$SERVICE-canary" --ignore-not-found
kubectl -n "$NS" rollout resume deployment "$DEPLOYMENT"
`

// runRecovery runs script with plain kubectl, as a person would with
// sluice gone.
func runRecovery(t *testing.T, ns, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.kubeconfig, "NS="+ns, "SERVICE=web", "INGRESS=web", "DEPLOYMENT=web")
	out, err := cmd.CombinedOutput()
	t.Logf("recovery:\n%s", out)
	if err != nil {
		t.Fatalf("the documented recovery failed: %v\n%s", err, out)
	}
}

// story is a Deployment "web" of 4 pods behind the Service "web" and the
// nginx Ingress "web", released by the Rollout "web" with both in its
// trafficRoutings.
type story struct {
	t  *testing.T
	ns string
}

func newStory(t *testing.T, prefix string, blueGreen bool) *story {
	t.Helper()
	ctx := ctxFor(t)
	s := &story{t: t, ns: newNamespace(t, prefix)}
	sel := map[string]string{"app": "web"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if err := suite.c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	class := "nginx"
	pathType := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: "web.example",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pathType,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	if err := suite.c.Create(ctx, ing); err != nil {
		t.Fatal(err)
	}
	replicas := int32(4)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: podSpec("web:v1", sel)},
	}
	if err := suite.c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	waitDeploymentAvailable(t, s.ns, "web", "web:v1")
	half, all := intstr.FromString("50%"), intstr.FromString("100%")
	// Step 1 shifts traffic, so sluice narrows the stable Service to the
	// stable revision's pods for it.
	weight := "50%"
	if blueGreen {
		weight = "0%"
	}
	steps := []rolloutsv1beta1.CanaryStep{{Replicas: &half, TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: &weight}}, {Replicas: &all}}
	routes := []rolloutsv1beta1.TrafficRoutingRef{{Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}}}
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
		Spec:       rolloutsv1beta1.RolloutSpec{WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}
	if blueGreen {
		ro.Spec.Strategy.BlueGreen = &rolloutsv1beta1.BlueGreenStrategy{Steps: steps, TrafficRoutings: routes}
	} else {
		ro.Spec.Strategy.Canary = &rolloutsv1beta1.CanaryStrategy{Steps: steps, TrafficRoutings: routes}
	}
	if err := suite.c.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, s.ns, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	return s
}

func (s *story) deployment() *appsv1.Deployment {
	d := &appsv1.Deployment{}
	if err := suite.c.Get(ctxFor(s.t), types.NamespacedName{Namespace: s.ns, Name: "web"}, d); err != nil {
		s.t.Fatal(err)
	}
	return d
}

// selector is the Service "web"'s selector.
func (s *story) selector() map[string]string {
	svc := &corev1.Service{}
	if err := suite.c.Get(ctxFor(s.t), types.NamespacedName{Namespace: s.ns, Name: "web"}, svc); err != nil {
		s.t.Fatal(err)
	}
	return svc.Spec.Selector
}

// gateState names the state workload/deployment put d in.
func gateState(d *appsv1.Deployment) string {
	inflated := d.Spec.MinReadySeconds == heldMinReadySeconds
	switch {
	case d.Spec.Paused && inflated:
		return "Arm"
	case !d.Spec.Paused && inflated:
		return "Move"
	case d.Spec.Paused:
		return "Hold"
	}
	return "Released"
}

// killAt sets the new image and kills sluice with SIGKILL the moment the
// Deployment is seen in state. It reports false when sluice had already
// gone past that state when it died (the caller tries again).
func (s *story) killAt(p *sluice, state string) bool {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(s.t), time.Minute)
	defer cancel()
	w, err := suite.c.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(s.ns))
	if err != nil {
		s.t.Fatal(err)
	}
	defer w.Stop()
	if err := setImage(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"}}, "web:v2"); err != nil {
		s.t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		if d, ok := ev.Object.(*appsv1.Deployment); ok && gateState(d) == state {
			p.Kill(s.t)
			break
		}
	}
	if ctx.Err() != nil {
		s.t.Fatalf("the Deployment never reached %s", state)
	}
	got := gateState(s.deployment())
	s.t.Logf("sluice killed with the Deployment in %s (wanted %s), the Service selecting %v", got, state, s.selector())
	return got == state
}

// waitFinished waits until Kubernetes has finished the Deployment on
// image: every pod of it, none other, all available, nothing held.
func (s *story) waitFinished(image string) {
	s.t.Helper()
	eventually(s.t, "Kubernetes finished the Deployment on "+image, func() (bool, string) {
		d := s.deployment()
		n := *d.Spec.Replicas
		st := d.Status
		pods := podsWithImage(s.t, s.ns, image)
		ok := !d.Spec.Paused && d.Spec.MinReadySeconds != heldMinReadySeconds && st.ObservedGeneration >= d.Generation &&
			st.UpdatedReplicas == n && st.AvailableReplicas == n && st.Replicas == n && pods == int(n) && livePods(s.t, s.ns) == int(n)
		return ok, fmt.Sprintf("state %s status %+v pods of %s %d", gateState(d), st, image, pods)
	})
}

func livePods(t *testing.T, ns string) int {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// Given a Deployment released with a stable Service in its trafficRoutings
// When sluice is killed (SIGKILL) in the middle of a batch, while the
// Deployment is armed (paused, minReadySeconds inflated) or moving
// (unpaused, minReadySeconds inflated), and the documented recovery is run
// with plain kubectl, sluice gone
// Then Kubernetes finishes the Deployment, and every Service selects
// ready pods throughout.
func TestRecovery_killedMidBatch_plainKubectlFinishesTheDeployment(t *testing.T) {
	for _, state := range []string{"Arm", "Move"} {
		t.Run(state, func(t *testing.T) {
			name := "sluice-recovery-" + strings.ToLower(state)
			t.Cleanup(func() { deleteWebhooks(t, name) })
			for attempt := 1; ; attempt++ {
				p := startSluice(t, name)
				s := newStory(t, "recover-"+strings.ToLower(state), false)
				m := kube.WatchServing(t, suite.c, s.ns)
				if !s.killAt(p, state) {
					m.End()
					if attempt == 5 {
						t.Fatalf("sluice never died in %s in %d attempts", state, attempt)
					}
					continue
				}
				runRecovery(t, s.ns, recoveryScript)
				s.waitFinished("web:v2")
				m.AssertAlwaysServed(t)
				return
			}
		})
	}
}

// Given a blue-green Deployment held between batches (step 1 of 2
// paused: 2 new pods beside the 4 old ones), with a stable Service in its
// trafficRoutings
// When sluice is killed and the Deployment resumed by hand (kubectl
// rollout resume, after the Service as documented)
// Then Kubernetes finishes it at its own size (not 200% forever), and
// every Service selects ready pods throughout.
func TestRecovery_blueGreenBetweenBatches_resumedByHandFinishes(t *testing.T) {
	t.Cleanup(func() { deleteWebhooks(t, "sluice-recovery-bluegreen") })
	p := startSluice(t, "sluice-recovery-bluegreen")
	s := newStory(t, "recover-bg", true)
	m := kube.WatchServing(t, suite.c, s.ns)
	if err := setImage(ctxFor(t), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"}}, "web:v2"); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, s.ns, "step 1 paused", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	p.Kill(t)
	t.Logf("sluice killed between batches, the Service selecting %v", s.selector())
	if got := podsWithImage(t, s.ns, "web:v2"); got != 2 {
		t.Fatalf("step 1 runs %d pods of web:v2, want 2", got)
	}
	runRecovery(t, s.ns, resumeScript)
	s.waitFinished("web:v2")
	m.AssertAlwaysServed(t)
}

// The same with the plugin's one command: kubectl sluice recover, sluice's
// controller gone, hands back the Service, the canary Ingress and Service,
// and the Deployment, in that order.
func TestRecovery_killedMidBatch_kubectlSluiceRecoverFinishesTheDeployment(t *testing.T) {
	const name = "sluice-recovery-plugin"
	t.Cleanup(func() { deleteWebhooks(t, name) })
	for attempt := 1; ; attempt++ {
		p := startSluice(t, name)
		s := newStory(t, "recover-plugin", false)
		m := kube.WatchServing(t, suite.c, s.ns)
		if !s.killAt(p, "Move") {
			m.End()
			if attempt == 5 {
				t.Fatalf("sluice never died in Move in %d attempts", attempt)
			}
			continue
		}
		var out bytes.Buffer
		cmd := plugin.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"recover", "web", "-n", s.ns, "--kubeconfig", suite.kubeconfig})
		err := cmd.ExecuteContext(ctxFor(t))
		t.Logf("kubectl sluice recover:\n%s", out.String())
		if err != nil {
			t.Fatal(err)
		}
		s.waitFinished("web:v2")
		m.AssertAlwaysServed(t)
		if sel := s.selector(); len(sel) != 1 || sel["app"] != "web" {
			t.Errorf("the Service selects %v after the recovery, want its own selector app=web", sel)
		}
		for _, obj := range []client.Object{&corev1.Service{}, &networkingv1.Ingress{}} {
			err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: s.ns, Name: "web-canary"}, obj)
			if err == nil {
				t.Errorf("%T web-canary still exists after the recovery", obj)
			}
		}
		return
	}
}

// Given a Deployment released with a stable Service in its
// trafficRoutings, paused at step 1 (the Service narrowed to the old
// revision's pods)
// When someone deletes the BatchRelease by hand, and sluice goes away (is
// killed) right after the BatchRelease handed the Deployment back
// Then Kubernetes finishes the Deployment with every Service selecting
// ready pods throughout: the stable Service got its own selector back
// before the Deployment was handed back, not after.
func TestRecovery_batchReleaseDeletedByHand_serviceRestoredBeforeTheHandBack(t *testing.T) {
	const name = "sluice-recovery-br"
	t.Cleanup(func() { deleteWebhooks(t, name) })
	p := startSluice(t, name)
	s := newStory(t, "recover-br", false)
	if err := setImage(ctxFor(t), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"}}, "web:v2"); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, s.ns, "step 1 paused", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	if sel := s.selector(); sel["pod-template-hash"] == "" {
		t.Fatalf("the stable Service selects %v at step 1, not narrowed", sel)
	}
	// The same sluice again, blocking once a BatchRelease of this
	// namespace has handed its workload back.
	p.Kill(t)
	p = managerproc.Start(t, managerproc.Options{
		Name: name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c,
		KillPoints: []killpoint.Point{killpoint.BatchReleaseHandedBack}, KillNamespace: s.ns,
	})
	m := kube.WatchServing(t, suite.c, s.ns)
	br := &rolloutsv1beta1.BatchRelease{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"}}
	if err := suite.c.Delete(ctxFor(t), br); err != nil {
		t.Fatal(err)
	}
	p.ReachedKillPoints(t)
	p.Kill(t)
	t.Logf("sluice killed after the hand-back, the Service selecting %v", s.selector())
	s.waitFinished("web:v2")
	m.AssertAlwaysServed(t)
	if sel := s.selector(); len(sel) != 1 || sel["app"] != "web" {
		t.Errorf("the Service selects %v, want its own selector app=web", sel)
	}
}
