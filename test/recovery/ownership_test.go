package recovery

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// gitopsApply server-side-applies the Deployment "web" as the field manager
// "gitops" would, with image and the given spec fields besides replicas,
// selector and template.
func gitopsApply(t *testing.T, ns, image string, extra map[string]any) {
	t.Helper()
	labels := map[string]any{"app": "web"}
	spec := map[string]any{
		"replicas": 4,
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
		},
	}
	for k, v := range extra {
		spec[k] = v
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": "web"},
		"spec":     spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.ApplyPatchType, b), client.FieldOwner("gitops"), client.ForceOwnership); err != nil {
		t.Fatalf("applying as gitops: %v", err)
	}
}

func sluiceEntries(d *appsv1.Deployment) []string {
	var out []string
	for _, mf := range d.ManagedFields {
		if strings.HasPrefix(mf.Manager, "sluice") {
			out = append(out, fmt.Sprintf("%s %s %s", mf.Manager, mf.Operation, mf.FieldsV1.GetRawString()))
		}
	}
	return out
}

// Given a Deployment that a GitOps tool server-side-applies with
// minReadySeconds, progressDeadlineSeconds and a rolling-update strategy
// When sluice releases a new revision of it and hands it back
// Then its managedFields hold no entry of sluice's, and the fields the
// GitOps tool removes from its manifest afterwards are really removed.
func TestHandBack_sluiceOwnsNoFieldOfTheWorkload(t *testing.T) {
	t.Cleanup(func() { deleteWebhooks(t, "sluice-ownership") })
	startSluice(t, "sluice-ownership")
	ctx := ctxFor(t)
	ns := newNamespace(t, "ownership")
	held := map[string]any{
		"minReadySeconds":         1,
		"progressDeadlineSeconds": 300,
		"strategy":                map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 1, "maxUnavailable": 1}},
	}
	gitopsApply(t, ns, "web:v1", held)
	waitDeploymentAvailable(t, ns, "web", "web:v1")
	half := intstr.FromString("50%")
	all := intstr.FromString("100%")
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &half, Pause: rolloutsv1beta1.RolloutPause{Duration: ptr(int32(0))}},
				{Replicas: &all},
			}}},
		},
	}
	if err := suite.c.Create(ctx, ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })

	gitopsApply(t, ns, "web:v2", held)
	waitRollout(t, ns, "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CanaryStatus != nil &&
			ro.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentAvailable(t, ns, "web", "web:v2")
	d := &appsv1.Deployment{}
	eventually(t, "the Deployment handed back", func() (bool, string) {
		if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		return !held && !d.Spec.Paused, fmt.Sprintf("held %v paused %v", held, d.Spec.Paused)
	})
	// The hand-back is two writes: the restore patch, then managedFields.
	eventually(t, "no field of the Deployment owned by sluice", func() (bool, string) {
		if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		got := sluiceEntries(d)
		_, owners := d.Annotations["sluice.dev/field-owners"]
		return len(got) == 0 && !owners, fmt.Sprintf("sluice's entries %v, owners annotation left %v", got, owners)
	})

	// The GitOps tool drops every held field from its manifest.
	gitopsApply(t, ns, "web:v2", nil)
	got := &appsv1.Deployment{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.MinReadySeconds != 0 {
		t.Errorf("minReadySeconds = %d after it was removed from the applied manifest, want 0", got.Spec.MinReadySeconds)
	}
	if p := got.Spec.ProgressDeadlineSeconds; p == nil || *p != 600 {
		t.Errorf("progressDeadlineSeconds = %v after it was removed from the applied manifest, want the default 600", p)
	}
	if ru := got.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" {
		t.Errorf("rollingUpdate = %+v after it was removed from the applied manifest, want the defaults 25%%/25%%", ru)
	}
}

func ptr[T any](v T) *T { return &v }

func waitRollout(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	eventually(t, "rollout "+what, func() (bool, string) {
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, ro); err != nil {
			return false, err.Error()
		}
		return cond(ro), fmt.Sprintf("phase %s step %d %s: %s", ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
	})
	return ro
}
