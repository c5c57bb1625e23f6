package recovery

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	createRollout(t, ns, "Deployment", "web")

	gitopsApply(t, ns, "web:v2", held)
	waitCompleted(t, ns)
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

// createRollout creates the Rollout "web" of the workload kind/name in ns,
// of two steps (50% without a pause, then 100%), and waits until it is
// Healthy.
func createRollout(t *testing.T, ns, kind, name string) {
	t.Helper()
	half := intstr.FromString("50%")
	all := intstr.FromString("100%")
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: kind, Name: name},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: &half, Pause: rolloutsv1beta1.RolloutPause{Duration: ptr(int32(0))}},
				{Replicas: &all},
			}}},
		},
	}
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool { return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
}

// waitCompleted waits until the release of the Rollout "web" in ns has
// completed.
func waitCompleted(t *testing.T, ns string) {
	t.Helper()
	waitRollout(t, ns, "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CanaryStatus != nil &&
			ro.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
}

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

// gitopsApplyWorkload server-side-applies the workload kind "db" as the
// field manager "gitops" would, at image, with spec's fields besides the
// selector and template.
func gitopsApplyWorkload(t *testing.T, ns, kind, image string, spec map[string]any) {
	t.Helper()
	labels := map[string]any{"app": "db"}
	full := map[string]any{
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}},
		},
	}
	for k, v := range spec {
		full[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"namespace": ns, "name": "db"},
		"spec":     full,
	}}
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.ApplyPatchType, b), client.FieldOwner("gitops"), client.ForceOwnership); err != nil {
		t.Fatalf("applying the %s as gitops: %v", kind, err)
	}
}

// Given a StatefulSet or DaemonSet that a GitOps tool server-side-applies
// with the fields a release changes set explicitly (the partition; the
// update strategy)
// When sluice releases a new revision of it in batches and hands it back
// Then its managedFields hold no entry of sluice's, and those fields are
// the GitOps tool's again.
func TestHandBack_partitionAndDaemonSetKinds_sluiceOwnsNoFieldOfTheWorkload(t *testing.T) {
	t.Cleanup(func() { deleteWebhooks(t, "sluice-ownership-kinds") })
	startSluice(t, "sluice-ownership-kinds")
	for _, tc := range []struct {
		kind string
		spec map[string]any
		// ready tells whether the workload runs image on every pod.
		ready func(u *unstructured.Unstructured) bool
		// owned are fields the GitOps tool must own after the hand-back.
		owned []string
	}{
		{kind: "StatefulSet", spec: map[string]any{
			"replicas": 4, "serviceName": "db",
			"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0}},
		}, ready: func(u *unstructured.Unstructured) bool {
			ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
			updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
			return ready == 4 && updated == 4
		}, owned: []string{`"f:partition"`}},
		{kind: "DaemonSet", spec: map[string]any{
			"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": 1}},
		}, ready: func(u *unstructured.Unstructured) bool {
			desired, _, _ := unstructured.NestedInt64(u.Object, "status", "desiredNumberScheduled")
			updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedNumberScheduled")
			ready, _, _ := unstructured.NestedInt64(u.Object, "status", "numberReady")
			return desired > 0 && updated == desired && ready == desired
		}, owned: []string{`"f:maxUnavailable"`, `"f:type"`}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ctx := ctxFor(t)
			ns := newNamespace(t, "ownership-"+strings.ToLower(tc.kind))
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apps/v1")
			u.SetKind(tc.kind)
			read := func() error { return suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, u) }
			gitopsApplyWorkload(t, ns, tc.kind, "db:v1", tc.spec)
			eventually(t, tc.kind+" ready on v1", func() (bool, string) {
				if err := read(); err != nil {
					return false, err.Error()
				}
				return tc.ready(u), fmt.Sprint(u.Object["status"])
			})
			createRollout(t, ns, tc.kind, "db")

			gitopsApplyWorkload(t, ns, tc.kind, "db:v2", tc.spec)
			waitCompleted(t, ns)
			eventually(t, "no field of the "+tc.kind+" owned by sluice, the held ones the GitOps tool's", func() (bool, string) {
				if err := read(); err != nil {
					return false, err.Error()
				}
				_, held := u.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
				_, owners := u.GetAnnotations()["sluice.dev/field-owners"]
				var mine, gitops []string
				for _, mf := range u.GetManagedFields() {
					raw := mf.FieldsV1.GetRawString()
					if strings.HasPrefix(mf.Manager, "sluice") && mf.Subresource == "" {
						mine = append(mine, fmt.Sprintf("%s %s %s", mf.Manager, mf.Operation, raw))
					}
					if mf.Manager == "gitops" {
						gitops = append(gitops, raw)
					}
				}
				owned := len(gitops) == 1
				for _, f := range tc.owned {
					owned = owned && strings.Contains(gitops[0], f)
				}
				return !held && !owners && len(mine) == 0 && owned,
					fmt.Sprintf("held %v, owners annotation %v, sluice's entries %v, gitops's %v", held, owners, mine, gitops)
			})
			if !tc.ready(u) {
				eventually(t, tc.kind+" finished on v2", func() (bool, string) {
					if err := read(); err != nil {
						return false, err.Error()
					}
					return tc.ready(u), fmt.Sprint(u.Object["status"])
				})
			}
		})
	}
}
