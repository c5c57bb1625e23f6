package hpa

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/metricsapi"
	"github.com/sluice-dev/sluice/test/poll"
)

// Given a Deployment of 4 pods (100Mi of memory requested each) under a
// HorizontalPodAutoscaler targeting 50% memory utilisation (2 to 8
// replicas), each pod using 50Mi, and a Rollout with steps 1 / 50% / 100%
// When a release is paused at step 2 (2 of 4 pods new) and the pods'
// usage doubles, then falls to a quarter, then doubles again
// Then kube-controller-manager's HPA scales the Deployment to 8, 4 and 8
// mid-release and sluice re-plans step 2 from its percentage each time (4
// new and 4 old pods, 2 and 2, 4 and 4), still paused and held; after the
// approval the release completes with all 8 pods on the new revision, the
// HPA still in charge of the replicas.
func TestHPA_scalesMidRelease_stepReplannedFromItsPercentage(t *testing.T) {
	ctx := poll.Context(t)
	metrics := startMetrics(t)
	ns := "hpa-" + rand.String(6)
	if err := suite.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "default ServiceAccount", func() (bool, string) {
		err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("50Mi")})

	replicas := int32(4)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "web:v1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi"),
					}},
				}}},
			},
		},
	}
	if err := suite.c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	waitPods(t, ns, "4 pods on v1", map[string]int{"web:v1": 4})

	zero := int32(0)
	target := int32(50)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr(int32(2)),
			MaxReplicas:    8,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target},
				},
			}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero},
			},
		},
	}
	if err := suite.c.Create(ctx, hpa); err != nil {
		t.Fatal(err)
	}
	// The HPA reads the metrics and finds 4 replicas right (50% of 100Mi).
	waitHPA(t, metrics, ns, "the HPA reading 50% utilisation at 4 replicas", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return utilisation(h) == 50 && h.Status.DesiredReplicas == 4
	})

	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy:    rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}},
		},
	}
	for _, s := range []string{"1", "50%", "100%"} {
		v := intstr.Parse(s)
		ro.Spec.Strategy.Canary.Steps = append(ro.Spec.Strategy.Canary.Steps, rolloutsv1beta1.CanaryStep{Replicas: &v})
	}
	if err := suite.c.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })

	setImage(t, ns, "web:v2")
	waitPaused(t, ns, 1)
	waitPods(t, ns, "step 1: 1 new pod", map[string]int{"web:v2": 1, "web:v1": 3})
	approve(t, ns)
	waitPaused(t, ns, 2)
	waitPods(t, ns, "step 2: 2 of 4 pods new", map[string]int{"web:v2": 2, "web:v1": 2})

	// Load doubles: the real HPA scales the Deployment to 8 mid-release.
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("100Mi")})
	waitHPA(t, metrics, ns, "the HPA scaling to 8", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 8
	})
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("50Mi")})
	// sluice re-plans step 2 (50%) from the new count: 4 new, 4 old.
	waitPods(t, ns, "step 2 re-planned at 8 replicas: 4 new and 4 old", map[string]int{"web:v2": 4, "web:v1": 4})
	got := getRollout(t, ns)
	if got.Status.CurrentStepIndex != 2 || got.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("after the HPA scaled: step %d %s, want step 2 still paused", got.Status.CurrentStepIndex, got.Status.CurrentStepState)
	}
	if dep := getDeployment(t, ns); !dep.Spec.Paused || *dep.Spec.Replicas != 8 {
		t.Fatalf("Deployment paused %v replicas %d, want held (paused) at the HPA's 8", dep.Spec.Paused, *dep.Spec.Replicas)
	}

	// Load falls to a quarter: the HPA scales down to 4 mid-release, and
	// step 2 is 50% of 4 again.
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("25Mi")})
	waitHPA(t, metrics, ns, "the HPA scaling down to 4", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 4
	})
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("50Mi")})
	waitPods(t, ns, "step 2 re-planned at 4 replicas: 2 new and 2 old", map[string]int{"web:v2": 2, "web:v1": 2})
	if got := getRollout(t, ns); got.Status.CurrentStepIndex != 2 || got.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("after the HPA scaled down: step %d %s, want step 2 still paused", got.Status.CurrentStepIndex, got.Status.CurrentStepState)
	}

	// Load doubles again before the last step: 8 replicas, all released.
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("100Mi")})
	waitHPA(t, metrics, ns, "the HPA scaling to 8 again", func(h *autoscalingv2.HorizontalPodAutoscaler) bool {
		return h.Status.DesiredReplicas == 8
	})
	metrics.SetUsage(ns, metricsapi.Usage{CPU: resource.MustParse("10m"), Memory: resource.MustParse("50Mi")})
	waitPods(t, ns, "step 2 at 8 replicas again: 4 new and 4 old", map[string]int{"web:v2": 4, "web:v1": 4})

	approve(t, ns)
	waitRollout(t, ns, "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitPods(t, ns, "8 pods on v2", map[string]int{"web:v2": 8})
	poll.Until(t, "the Deployment handed back to Kubernetes and complete", func() (bool, string) {
		dep := getDeployment(t, ns)
		_, held := dep.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		ok := !held && !dep.Spec.Paused && *dep.Spec.Replicas == 8 && dep.Status.AvailableReplicas == 8 && dep.Status.UpdatedReplicas == 8
		return ok, fmt.Sprintf("held %v paused %v status %+v", held, dep.Spec.Paused, dep.Status)
	})
	if h := getHPA(t, ns); h.Status.DesiredReplicas != 8 {
		t.Fatalf("HPA desires %d replicas after the release, want 8", h.Status.DesiredReplicas)
	}
}

func ptr[T any](v T) *T { return &v }

func utilisation(h *autoscalingv2.HorizontalPodAutoscaler) int32 {
	for _, m := range h.Status.CurrentMetrics {
		if m.Resource != nil && m.Resource.Current.AverageUtilization != nil {
			return *m.Resource.Current.AverageUtilization
		}
	}
	return -1
}

func getHPA(t *testing.T, ns string) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "web"}, h); err != nil {
		t.Fatal(err)
	}
	return h
}

func waitHPA(t *testing.T, m *metricsapi.Server, ns, what string, cond func(*autoscalingv2.HorizontalPodAutoscaler) bool) {
	t.Helper()
	poll.Until(t, what, func() (bool, string) {
		h := getHPA(t, ns)
		return cond(h), fmt.Sprintf("desired %d current %d metrics %d%% conditions %+v (metrics lists served: %d)",
			h.Status.DesiredReplicas, h.Status.CurrentReplicas, utilisation(h), h.Status.Conditions, m.Served())
	})
}

func getRollout(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "web"}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

func getDeployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

func waitRollout(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) {
	t.Helper()
	poll.Until(t, "rollout "+what, func() (bool, string) {
		ro := getRollout(t, ns)
		return cond(ro), fmt.Sprintf("phase %s step %d %s: %s", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	})
}

func waitPaused(t *testing.T, ns string, step int32) {
	t.Helper()
	waitRollout(t, ns, fmt.Sprintf("step %d paused", step), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == step && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// waitPods waits until the ready, live pods run exactly want (image:
// count).
func waitPods(t *testing.T, ns, what string, want map[string]int) {
	t.Helper()
	poll.Until(t, what, func() (bool, string) {
		pods := &corev1.PodList{}
		if err := suite.c.List(poll.Context(t), pods, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		got := map[string]int{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && ready(&p) {
				got[p.Spec.Containers[0].Image]++
			}
		}
		ok := len(got) == len(want)
		for k, v := range want {
			ok = ok && got[k] == v
		}
		return ok, fmt.Sprintf("ready pods by image %v", got)
	})
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func setImage(t *testing.T, ns, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(poll.Context(t), d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
}

// approve patches the status as kubectl-kruise does.
func approve(t *testing.T, ns string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(poll.Context(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatal(err)
	}
}
