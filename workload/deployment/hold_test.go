package deployment

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func dep(image string) *appsv1.Deployment {
	one, quarter := intstr.FromInt32(0), intstr.FromString("25%")
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](4),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &quarter}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}},
		},
	}
}

func held(image string) *appsv1.Deployment {
	d := dep(image)
	d.Spec.Paused = true
	d.Annotations[rolloutsv1beta1.InProgressingAnnotation] = `{"rolloutName":"web"}`
	d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation] = `{"metadata":{"annotations":{},"labels":{}},"spec":{"paused":false,"minReadySeconds":0,"progressDeadlineSeconds":600,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`
	return d
}

func TestHoldDeployment(t *testing.T) {
	tests := []struct {
		name        string
		old, update *appsv1.Deployment
		mutate      func(*appsv1.Deployment)
		wantChanged bool
		wantPaused  bool
	}{
		{name: "template change is held", old: dep("v1"), update: dep("v2"), wantChanged: true, wantPaused: true},
		{name: "no change passes", old: dep("v1"), update: dep("v1")},
		{name: "scaled to zero passes", old: dep("v1"), update: dep("v2"), mutate: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr[int32](0) }},
		{name: "Recreate is held", old: dep("v1"), update: dep("v2"), mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}, wantChanged: true, wantPaused: true},
		{name: "rollout-id change is held", old: dep("v1"), update: dep("v1"), mutate: func(d *appsv1.Deployment) {
			d.Annotations[rolloutsv1beta1.RolloutIDLabel] = "r2"
		}, wantChanged: true, wantPaused: true},
		{name: "unpause by hand during a release is undone", old: held("v2"), update: held("v2"), mutate: func(d *appsv1.Deployment) {
			d.Spec.Paused = false
		}, wantChanged: true, wantPaused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutate != nil {
				tt.mutate(tt.update)
			}
			changed, why := holdDeployment(tt.old, tt.update, "web")
			if changed != tt.wantChanged || tt.update.Spec.Paused != tt.wantPaused {
				t.Fatalf("holdDeployment() = %v (%s), paused %v; want %v, paused %v", changed, why, tt.update.Spec.Paused, tt.wantChanged, tt.wantPaused)
			}
			if tt.wantChanged && tt.update.Annotations[rolloutsv1beta1.InProgressingAnnotation] != `{"rolloutName":"web"}` {
				t.Fatalf("in-progressing annotation = %q", tt.update.Annotations[rolloutsv1beta1.InProgressingAnnotation])
			}
		})
	}
}

// A user's change to a held field is kept for the end of the release.
func TestHoldDeployment_userStrategyChangeKeptForRestore(t *testing.T) {
	old, update := held("v2"), held("v2")
	two := intstr.FromInt32(2)
	update.Spec.Strategy.RollingUpdate.MaxUnavailable = &two
	if changed, _ := holdDeployment(old, update, "web"); !changed {
		t.Fatal("not changed")
	}
	if got := update.Spec.Strategy.RollingUpdate.MaxUnavailable.String(); got != "25%" {
		t.Fatalf("held maxUnavailable = %s, want sluice's 25%%", got)
	}
	want := `"maxUnavailable":2`
	if got := update.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !strings.Contains(got, want) {
		t.Fatalf("restore patch %s lacks %s", got, want)
	}
}

// A Deployment held before its release claimed it (Recreate, which blocks
// the release) takes the user's strategy: setting RollingUpdate is the fix
// the Rollout names.
func TestHoldDeployment_strategyFixedBeforeTheClaimGoesThrough(t *testing.T) {
	old := dep("v2")
	old.Spec.Paused = true
	old.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	old.Annotations[rolloutsv1beta1.InProgressingAnnotation] = `{"rolloutName":"web"}`
	update := dep("v2")
	update.Annotations[rolloutsv1beta1.InProgressingAnnotation] = `{"rolloutName":"web"}`
	changed, why := holdDeployment(old, update, "web")
	if !changed || !update.Spec.Paused {
		t.Fatalf("holdDeployment() = %v (%s), paused %v; want the Deployment kept paused", changed, why, update.Spec.Paused)
	}
	if update.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Fatalf("strategy %s, want the user's RollingUpdate", update.Spec.Strategy.Type)
	}
}

func ptr[T any](v T) *T { return &v }
