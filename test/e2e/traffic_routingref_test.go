package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// sharedRouting creates the TrafficRouting name routing through the Service
// and nginx Ingress web (grace period 1s) with strategy.
func sharedRouting(t *testing.T, ns, name string, strategy rolloutsv1alpha1.TrafficRoutingStrategy) {
	t.Helper()
	tr := &rolloutsv1alpha1.TrafficRouting{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rolloutsv1alpha1.TrafficRoutingSpec{
			ObjectRef: []rolloutsv1alpha1.TrafficRoutingRef{{
				Service: "web", GracePeriodSeconds: 1,
				Ingress: &rolloutsv1beta1.IngressTrafficRouting{ClassType: "nginx", Name: "web"},
			}},
			Strategy: strategy,
		},
	}
	if err := suite.c.Create(ctxFor(t), tr); err != nil {
		t.Fatalf("creating TrafficRouting %s: %v", name, err)
	}
}

// getRouting reads the TrafficRouting name; nil once it is gone.
func getRouting(t *testing.T, ns, name string) *rolloutsv1alpha1.TrafficRouting {
	t.Helper()
	tr := &rolloutsv1alpha1.TrafficRouting{}
	err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, tr)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading TrafficRouting %s: %v", name, err)
	}
	return tr
}

// waitRouting waits until the TrafficRouting name is in phase, with
// exactly the finalizers want.
func waitRouting(t *testing.T, ns, name string, phase rolloutsv1alpha1.TrafficRoutingPhase, want ...string) {
	t.Helper()
	eventually(t, "TrafficRouting "+name+" "+string(phase), func() (bool, string) {
		tr := getRouting(t, ns, name)
		if tr == nil {
			return false, "not found"
		}
		got := slices.Sorted(slices.Values(tr.Finalizers))
		return tr.Status.Phase == phase && slices.Equal(got, slices.Sorted(slices.Values(want))),
			string(tr.Status.Phase) + ": " + tr.Status.Message + ", finalizers " + fmtList(got)
	})
}

func fmtList(s []string) string {
	return "[" + strings.Join(s, " ") + "]"
}

// waitCanaryIngress waits until the canary Ingress of web carries the
// nginx annotations want (nil: until it is gone).
func waitCanaryIngress(t *testing.T, ns string, want map[string]string) {
	t.Helper()
	eventually(t, "canary Ingress annotations", func() (bool, string) {
		got := canaryAnnotations(t, ns, "web")
		return maps.Equal(got, want) && (want != nil) == (got != nil), fmtMap(got)
	})
}

func fmtMap(m map[string]string) string {
	if m == nil {
		return "no canary Ingress"
	}
	keys := slices.Sorted(maps.Keys(m))
	out := ""
	for _, k := range keys {
		out += k + "=" + m[k] + " "
	}
	return out
}

// canaryBackend returns the Service the canary Ingress of web sends its
// requests to.
func canaryBackend(t *testing.T, ns string) string {
	t.Helper()
	ing := &networkingv1.Ingress{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web-canary"}, ing); err != nil {
		t.Fatal(err)
	}
	return ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name
}

// Given a Deployment of 4 pods behind the Service and nginx Ingress web,
// a TrafficRouting "shared" naming them with no strategy of its own, and a
// canary-style Rollout with trafficRoutingRef "shared" and no
// trafficRoutings, with steps 20% / 50% / 100%
// When the image changes and every step is approved
// Then the Rollout holds progressing.rollouts.kruise.io/web on the
// TrafficRouting while it releases, the routes the TrafficRouting names
// carry each step's weight to the canary Service with the step's new pods
// selected, and at the end the routes are restored, the Services and
// Ingress are as the user wrote them and the TrafficRouting is Healthy
// without the Rollout's finalizer.
func TestTrafficRouting_sharedByRollout_routesFollowStepsAndRestore(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)
	sharedRouting(t, ns, "shared", rolloutsv1alpha1.TrafficRoutingStrategy{})
	waitRouting(t, ns, "shared", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)
	if got := canaryAnnotations(t, ns, "web"); got != nil {
		t.Fatalf("a TrafficRouting without strategy created a canary Ingress: %v", got)
	}

	ro := trafficRollout(ns, "web", true, nil, trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", "100%"))
	ro.Spec.Strategy.Canary.TrafficRoutingRef = "shared"
	createRollout(t, ro)
	setImage(t, ns, "web", v2)

	// Step 1: 1 new pod, 20% through the shared routes.
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitRouting(t, ns, "shared", rolloutsv1alpha1.TrafficRoutingPhaseProgressing,
		rolloutsv1alpha1.TrafficRoutingFinalizer, rolloutsv1alpha1.ProgressingFinalizerPrefix+"web")
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})

	// Step 2: 2 new pods, 50%.
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 2}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	// The end: routes restored, the TrafficRouting free again.
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	if got := podImages(t, ns, "web"); !maps.Equal(got, map[string]int{v2: 4}) {
		t.Fatalf("pods after the release %v, want 4 on v2", got)
	}
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	waitRouting(t, ns, "shared", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)
}

// Given the Service and nginx Ingress web and a TrafficRouting used by no
// Rollout, with strategy weight 20
// When its strategy changes to weight 50, then to a header match, and it
// is deleted
// Then the canary Ingress beside web carries 20, then 50, then the header
// (sending to the stable Service itself, as OpenKruise's TrafficRouting
// does), and after the deletion the canary Ingress is gone, the
// TrafficRouting too, and the Ingress and Service are as the user wrote
// them.
func TestTrafficRouting_standalone_strategyShiftsRoutesAndDeletionRestores(t *testing.T) {
	ns := newNamespace(t)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)
	sharedRouting(t, ns, "edge", rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](20)})

	waitCanaryIngress(t, ns, map[string]string{"canary": "true", "canary-weight": "20"})
	waitRouting(t, ns, "edge", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)
	if got := canaryBackend(t, ns); got != "web" {
		t.Fatalf("canary Ingress sends to %s, want the stable Service web", got)
	}

	setStrategy := func(s rolloutsv1alpha1.TrafficRoutingStrategy) {
		t.Helper()
		tr := getRouting(t, ns, "edge")
		tr.Spec.Strategy = s
		if err := suite.c.Update(ctxFor(t), tr); err != nil {
			t.Fatalf("updating the strategy: %v", err)
		}
	}
	setStrategy(rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](50)})
	waitCanaryIngress(t, ns, map[string]string{"canary": "true", "canary-weight": "50"})
	waitRouting(t, ns, "edge", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)

	setStrategy(rolloutsv1alpha1.TrafficRoutingStrategy{Matches: []rolloutsv1alpha1.HttpRouteMatch{{
		Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user-agent", Value: "pc"}},
	}}})
	waitCanaryIngress(t, ns, map[string]string{"canary": "true", "canary-by-header": "user-agent", "canary-by-header-value": "pc"})

	if err := suite.c.Delete(ctxFor(t), getRouting(t, ns, "edge")); err != nil {
		t.Fatalf("deleting the TrafficRouting: %v", err)
	}
	eventually(t, "TrafficRouting and canary Ingress gone", func() (bool, string) {
		tr, ing := getRouting(t, ns, "edge"), getObject(t, ns, "web-canary", ingressGVK)
		return tr == nil && ing == nil, "canary ingress " + fmtBool(ing != nil) + ", TrafficRouting " + fmtBool(tr != nil)
	})
	if got := userView(t, ns, "web", ingressGVK); got != ingBefore {
		t.Fatalf("Ingress after the deletion:\n%s\nbefore:\n%s", got, ingBefore)
	}
	if got := userView(t, ns, "web", serviceGVK); got != svcBefore {
		t.Fatalf("Service after the deletion:\n%s\nbefore:\n%s", got, svcBefore)
	}
	assertSluiceOwnsNothing(t, ns, "web", ingressGVK)
}

// Given a Deployment of 4 pods behind the Service and nginx Ingress web,
// a TrafficRouting "shop" used alone with weight 10 (its canary Ingress
// sending 10% to the stable Service), and a canary-style Rollout naming it
// with the v1alpha1 annotation rollouts.kruise.io/trafficrouting, with
// steps 20% / 100%
// When the image changes and the step is approved
// Then at step 1 the TrafficRouting has handed its routes over (its
// finalizer from the Rollout, phase Progressing) and the canary Ingress
// sends 20% to the canary Service selecting the 1 new pod; after the
// release the stable Service is as written and the TrafficRouting routes
// its own 10% to the stable Service again.
func TestTrafficRouting_aloneThenReleasedThrough_handsRoutesOverAndBack(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	svcBefore := userView(t, ns, "web", serviceGVK)
	sharedRouting(t, ns, "shop", rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](10)})
	waitCanaryIngress(t, ns, map[string]string{"canary": "true", "canary-weight": "10"})
	waitRouting(t, ns, "shop", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)

	ro := trafficRollout(ns, "web", true, nil, trafficStep("1", "20%"), trafficStep("100%", "100%"))
	ro.Annotations = map[string]string{rolloutsv1beta1.TrafficRoutingAnnotation: "shop"}
	createRollout(t, ro)
	setImage(t, ns, "web", v2)

	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitRouting(t, ns, "shop", rolloutsv1alpha1.TrafficRoutingPhaseProgressing,
		rolloutsv1alpha1.TrafficRoutingFinalizer, rolloutsv1alpha1.ProgressingFinalizerPrefix+"web")
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 4})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})

	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	if got := podImages(t, ns, "web"); !maps.Equal(got, map[string]int{v2: 4}) {
		t.Fatalf("pods after the release %v, want 4 on v2", got)
	}
	eventually(t, "canary Service gone", func() (bool, string) {
		return getObject(t, ns, "web-canary", serviceGVK) == nil, "present"
	})
	if got := userView(t, ns, "web", serviceGVK); got != svcBefore {
		t.Fatalf("stable Service after the release:\n%s\nbefore:\n%s", got, svcBefore)
	}
	waitRouting(t, ns, "shop", rolloutsv1alpha1.TrafficRoutingPhaseHealthy, rolloutsv1alpha1.TrafficRoutingFinalizer)
	waitCanaryIngress(t, ns, map[string]string{"canary": "true", "canary-weight": "10"})
	if got := canaryBackend(t, ns); got != "web" {
		t.Fatalf("canary Ingress sends to %s after the release, want the stable Service web", got)
	}
}

// Given a Rollout whose trafficRoutingRef names a TrafficRouting that does
// not exist yet (a GitOps tool applies it later)
// When the image changes
// Then the update is held, no new pod starts and the Rollout says what it
// waits for; once the TrafficRouting exists the release starts with its
// traffic steps: step 1 routes 20% through the TrafficRouting's Ingress.
func TestTrafficRouting_missing_holdsTheUpdateUntilCreated(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 2, v1)
	webService(t, ns, "web", corev1.ServiceTypeClusterIP)
	nginxIngress(t, ns, "web", "web")
	ro := trafficRollout(ns, "web", true, nil, trafficStep("1", "20%"), trafficStep("100%", "100%"))
	ro.Spec.Strategy.Canary.TrafficRoutingRef = "later"
	createRollout(t, ro)
	setImage(t, ns, "web", v2)
	waitRollout(t, ns, "web", "holding the revision, naming TrafficRouting later", func(r *rolloutsv1beta1.Rollout) bool {
		return strings.Contains(r.Status.Message, "TrafficRouting later not found")
	})
	if d := getDeployment(t, ns, "web"); !d.Spec.Paused || d.Annotations[rolloutsv1beta1.InProgressingAnnotation] == "" {
		t.Fatalf("deployment while the TrafficRouting is missing: paused=%v annotations %v, want held by the webhook", d.Spec.Paused, d.Annotations)
	}
	if got := podImages(t, ns, "web"); !maps.Equal(got, map[string]int{v1: 2}) {
		t.Fatalf("pods while the TrafficRouting is missing %v, want the 2 old ones only", got)
	}
	if got := canaryAnnotations(t, ns, "web"); got != nil {
		t.Fatalf("a canary Ingress while the TrafficRouting is missing: %v", got)
	}

	sharedRouting(t, ns, "later", rolloutsv1alpha1.TrafficRoutingStrategy{})
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertSelected(t, ns, map[string]int{v2: 1}, map[string]int{v1: 2})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
}
