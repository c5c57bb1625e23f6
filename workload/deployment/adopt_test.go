package deployment

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestAdoptView(t *testing.T) {
	held := func(annotations map[string]string) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: annotations,
			Labels: map[string]string{kruiseAdvancedLabel: "true"}}}
		d.Spec.Paused = true
		d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
		return d
	}
	t.Run("partition style: the rollingUpdate OpenKruise kept comes back", func(t *testing.T) {
		d := held(map[string]string{kruiseStrategyAnnotation: `{"rollingStyle":"Partition","rollingUpdate":{"maxUnavailable":"10%","maxSurge":2},"paused":false,"partition":1}`})
		v, why := adoptView(d)
		ru := v.Spec.Strategy.RollingUpdate
		if why != "" || v.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxSurge.String() != "2" || ru.MaxUnavailable.String() != "10%" {
			t.Fatalf("view %+v, why %q", v.Spec.Strategy, why)
		}
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Fatal("the live Deployment was changed")
		}
		r := newRestorePatch(v)
		if r.Spec.Strategy.RollingUpdate.MaxSurge.String() != "2" {
			t.Fatalf("restore patch %+v", r.Spec.Strategy)
		}
	})
	t.Run("Recreate with no rollingUpdate kept: refused, saying how", func(t *testing.T) {
		_, why := adoptView(held(map[string]string{kruiseStrategyAnnotation: `{"rollingStyle":"Partition"}`}))
		if !strings.Contains(why, "Recreate") || !strings.Contains(why, "kubectl patch deployment web") {
			t.Fatalf("why = %q", why)
		}
		if _, why := adoptView(held(map[string]string{rolloutsv1beta1.ControlInfoAnnotation: "{}"})); why == "" {
			t.Fatal("a Recreate Deployment without OpenKruise's annotation was adopted")
		}
	})
	t.Run("blue-green: OpenKruise's timing is not taken for the user's", func(t *testing.T) {
		d := held(map[string]string{kruiseOriginalAnnotation: `{"maxSurge":"25%","maxUnavailable":"25%","minReadySeconds":5,"progressDeadlineSeconds":600}`})
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
		d.Spec.MinReadySeconds = 2147483646
		v, why := adoptView(d)
		if why != "" || v.Spec.MinReadySeconds != 5 || *v.Spec.ProgressDeadlineSeconds != 600 || v.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" {
			t.Fatalf("view %+v, why %q", v.Spec, why)
		}
	})
	t.Run("claimed by sluice: nothing to adopt", func(t *testing.T) {
		d := held(map[string]string{rolloutsv1beta1.DeploymentOriginalAnnotation: "{}", kruiseStrategyAnnotation: "{}"})
		if leftByOpenKruise(d) {
			t.Fatal("a Deployment sluice claimed is taken for one OpenKruise left")
		}
		if v, why := adoptView(d); v != d || why != "" {
			t.Fatal("a Deployment sluice claimed was adopted")
		}
	})
}

func TestAdoptInto(t *testing.T) {
	live := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42",
		Annotations: map[string]string{kruiseStrategyAnnotation: "{}", kruiseExtraStatusAnnotation: "{}"},
		Labels:      map[string]string{kruiseAdvancedLabel: "true"}}}
	live.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	patch := map[string]any{"spec": map[string]any{"strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": 0}}}}
	adoptInto(patch, live)
	meta := patch["metadata"].(map[string]any)
	if meta["resourceVersion"] != "42" || meta["labels"].(map[string]any)[kruiseAdvancedLabel] != nil {
		t.Fatalf("metadata %v", meta)
	}
	if a := meta["annotations"].(map[string]any); len(a) != 2 {
		t.Fatalf("annotations %v, want OpenKruise's two removed", a)
	}
	if s := patch["spec"].(map[string]any)["strategy"].(map[string]any); s["type"] != "RollingUpdate" || s["rollingUpdate"] == nil {
		t.Fatalf("strategy %v", s)
	}
}
