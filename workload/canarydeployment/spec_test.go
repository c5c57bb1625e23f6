package canarydeployment

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// stableDeployment is a held stable Deployment: paused, on a new template.
func stableDeployment() *appsv1.Deployment {
	replicas := int32(10)
	surge, unavailable := intstr.FromString("25%"), intstr.FromInt32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web", UID: "uid-web",
			Labels:      map[string]string{"team": "a", rolloutsv1beta1.WorkloadTypeLabel: "deployment"},
			Annotations: map[string]string{rolloutsv1beta1.InProgressingAnnotation: `{"rolloutName":"web"}`},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Paused:   true,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
			MinReadySeconds: 5,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:v2"}}},
			},
		},
	}
}

func TestNewCanary(t *testing.T) {
	tests := []struct {
		name            string
		mutate          func(*appsv1.Deployment)
		meta            *rolloutsv1beta1.PatchPodTemplateMetadata
		wantPodLabels   map[string]string
		wantPodAnnots   map[string]string
		wantSelector    metav1.LabelSelector
		wantErr         bool
		wantUnsupported bool
	}{
		{
			name:          "copy of the stable with the canary label in selector and template",
			wantPodLabels: map[string]string{"app": "web", Label: "web"},
			wantPodAnnots: map[string]string{"note": "x"},
			wantSelector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", Label: "web"}},
		},
		{
			name:          "patchPodTemplateMetadata is added to the pod template",
			meta:          &rolloutsv1beta1.PatchPodTemplateMetadata{Labels: map[string]string{"track": "canary"}, Annotations: map[string]string{"canary": "yes", "note": "y"}},
			wantPodLabels: map[string]string{"app": "web", "track": "canary", Label: "web"},
			wantPodAnnots: map[string]string{"note": "y", "canary": "yes"},
			wantSelector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", Label: "web"}},
		},
		{
			name:          "the canary label wins over a patched label of the same key",
			meta:          &rolloutsv1beta1.PatchPodTemplateMetadata{Labels: map[string]string{Label: "other"}},
			wantPodLabels: map[string]string{"app": "web", Label: "web"},
			wantPodAnnots: map[string]string{"note": "x"},
			wantSelector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", Label: "web"}},
		},
		{
			name: "matchExpressions are kept",
			mutate: func(d *appsv1.Deployment) {
				d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}
				d.Spec.Template.Labels["tier"] = "front"
			},
			wantPodLabels: map[string]string{"app": "web", "tier": "front", Label: "web"},
			wantPodAnnots: map[string]string{"note": "x"},
			wantSelector: metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web", Label: "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}},
			},
		},
		{
			name:            "a patched label that contradicts the selector is refused",
			meta:            &rolloutsv1beta1.PatchPodTemplateMetadata{Labels: map[string]string{"app": "web-canary"}},
			wantErr:         true,
			wantUnsupported: true,
		},
		{
			name:            "a stable name longer than a label value is refused",
			mutate:          func(d *appsv1.Deployment) { d.Name = strings.Repeat("w", 64) },
			wantErr:         true,
			wantUnsupported: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stable := stableDeployment()
			if tt.mutate != nil {
				tt.mutate(stable)
			}
			before := stable.DeepCopy()
			got, err := newCanary(stable, "7778b69855", tt.meta)
			if !apiequality.Semantic.DeepEqual(before, stable) {
				t.Fatalf("newCanary changed the stable Deployment")
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if tt.wantUnsupported != errors.Is(err, workload.ErrUnsupported) {
					t.Fatalf("err = %v, want ErrUnsupported %v", err, tt.wantUnsupported)
				}
				return
			}
			if got.Name != "web-canary-7778b69855" || got.Namespace != "shop" {
				t.Errorf("name %s/%s", got.Namespace, got.Name)
			}
			if want := map[string]string{Label: "web"}; !apiequality.Semantic.DeepEqual(got.Labels, want) {
				t.Errorf("labels %v, want %v (none of the stable's)", got.Labels, want)
			}
			if len(got.Annotations) != 0 {
				t.Errorf("annotations %v, want none of the stable's", got.Annotations)
			}
			wantOwner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web"}}
			if !apiequality.Semantic.DeepEqual(got.OwnerReferences, wantOwner) {
				t.Errorf("owner references %+v, want %+v", got.OwnerReferences, wantOwner)
			}
			if got.Spec.Replicas == nil || *got.Spec.Replicas != 0 || got.Spec.Paused {
				t.Errorf("replicas %v paused %v, want 0 and not paused", got.Spec.Replicas, got.Spec.Paused)
			}
			if !apiequality.Semantic.DeepEqual(*got.Spec.Selector, tt.wantSelector) {
				t.Errorf("selector %+v, want %+v", got.Spec.Selector, tt.wantSelector)
			}
			if !apiequality.Semantic.DeepEqual(got.Spec.Template.Labels, tt.wantPodLabels) {
				t.Errorf("pod labels %v, want %v", got.Spec.Template.Labels, tt.wantPodLabels)
			}
			if !apiequality.Semantic.DeepEqual(got.Spec.Template.Annotations, tt.wantPodAnnots) {
				t.Errorf("pod annotations %v, want %v", got.Spec.Template.Annotations, tt.wantPodAnnots)
			}
			if !apiequality.Semantic.DeepEqual(got.Spec.Template.Spec, stable.Spec.Template.Spec) ||
				!apiequality.Semantic.DeepEqual(got.Spec.Strategy, stable.Spec.Strategy) ||
				got.Spec.MinReadySeconds != stable.Spec.MinReadySeconds {
				t.Errorf("pod spec, strategy or timing differ from the stable's: %+v", got.Spec)
			}
		})
	}
}

func TestOwnedBy(t *testing.T) {
	stable := stableDeployment()
	c, err := newCanary(stable, "rev", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ownedBy(c, stable) {
		t.Errorf("a canary built for the stable is not owned by it")
	}
	other := stable.DeepCopy()
	other.UID = "uid-recreated"
	if ownedBy(c, other) {
		t.Errorf("a canary is owned by a recreated stable of the same name")
	}
}
