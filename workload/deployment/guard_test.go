package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func podTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
	}
}

// A new revision written between Status and UpgradeBatch (the webhook holds
// it again) is not released with the batch computed for the old one: the
// held Deployment is left exactly as it is until the next reconcile reads a
// fresh status. With the template unchanged, the same call opens the gate.
func TestUpgradeBatch_templateChangedSinceStatus_placesNothing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		newImage string
		wantSame bool
	}{
		{name: "template changed", newImage: "web:v3", wantSame: true},
		{name: "template unchanged", wantSame: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "d1", Annotations: map[string]string{
					rolloutsv1beta1.DeploymentOriginalAnnotation: `{"spec":{"paused":false}}`,
					rolloutsv1beta1.InProgressingAnnotation:      `{"rolloutName":"web"}`,
				}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr[int32](4),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: podTemplate("web:v2"),
					Paused:   true,
					Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
						MaxSurge: ptr(intstr.FromInt32(0)), MaxUnavailable: ptr(intstr.FromInt32(1)),
					}},
				},
			}
			old := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web-v1", Namespace: "shop", Labels: map[string]string{"app": "web"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1", Controller: ptr(true)}}},
				Spec:   appsv1.ReplicaSetSpec{Replicas: ptr[int32](4), Selector: d.Spec.Selector, Template: podTemplate("web:v1")},
				Status: appsv1.ReplicaSetStatus{Replicas: 4, ReadyReplicas: 4, AvailableReplicas: 4},
			}
			c := fake.NewClientBuilder().WithObjects(d, old).Build()
			r := New(c, c, types.NamespacedName{Namespace: "shop", Name: "web"})
			if _, err := r.Status(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := &appsv1.Deployment{}
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "web"}, before); err != nil {
				t.Fatal(err)
			}
			if tc.newImage != "" {
				before.Spec.Template = podTemplate(tc.newImage)
				if err := c.Update(t.Context(), before); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.UpgradeBatch(t.Context(), 2); err != nil {
				t.Fatal(err)
			}
			after := &appsv1.Deployment{}
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "shop", Name: "web"}, after); err != nil {
				t.Fatal(err)
			}
			same := apiequality.Semantic.DeepEqual(before.Spec, after.Spec)
			if same != tc.wantSame {
				t.Errorf("spec unchanged = %v, want %v: paused %v, strategy %+v, minReadySeconds %d",
					same, tc.wantSame, after.Spec.Paused, after.Spec.Strategy.RollingUpdate, after.Spec.MinReadySeconds)
			}
		})
	}
}
