package daemonset

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// fixture is a DaemonSet of 4 nodes whose template moved from v1 to v2,
// with one pod per node on v1, in a fake API.
func fixture(t *testing.T, mutate func(*appsv1.DaemonSet)) (client.Client, *Releaser) {
	t.Helper()
	ds := heldDaemonSet("registry.example/a:v2")
	ds.Namespace, ds.UID, ds.Generation = "ns", "ds-uid", 2
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, NumberAvailable: 4}
	if mutate != nil {
		mutate(ds)
	}
	objs := []client.Object{ds}
	for i, h := range []struct {
		image, hash string
	}{{"registry.example/a:v1", "7bf4fcb7f4"}, {"registry.example/a:v2", "57864f86f5"}} {
		cr := history(ds, template(h.image), h.hash, int64(i+1))
		cr.Namespace = "ns"
		cr.Labels["app"] = "agent"
		objs = append(objs, &cr)
	}
	for _, node := range []string{"n0", "n1", "n2", "n3"} {
		objs = append(objs, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "agent-" + node, UID: types.UID("uid-" + node),
				Labels:          map[string]string{"app": "agent", appsv1.DefaultDaemonSetUniqueLabelKey: "7bf4fcb7f4"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
				// A finalizer keeps a deleted pod, terminating, as a
				// kubelet would during its grace period.
				Finalizers: []string{"test/terminating"},
			},
			Spec:   corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		})
	}
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	r, err := New(c, c, types.NamespacedName{Namespace: "ns", Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return c, r.(*Releaser)
}

// terminating lists the pods being deleted.
func terminating(t *testing.T, c client.Client) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			out = append(out, p.Name)
		}
	}
	return out
}

func TestUpgradeBatch_deletesWithinMaxUnavailableAndNeverTwice(t *testing.T) {
	ctx := context.Background()
	c, r := fixture(t, func(ds *appsv1.DaemonSet) {
		// The DaemonSet's own maxUnavailable (in the restore patch) is 2.
		ds.Labels[rolloutsv1beta1.StableRevisionLabel] = "7bf4fcb7f4"
	})
	placed, err := r.UpgradeBatch(ctx, 3)
	if err != nil || placed {
		t.Fatalf("UpgradeBatch = %v, %v; want not placed", placed, err)
	}
	if got := fmt.Sprint(terminating(t, c)); got != "[agent-n0 agent-n1]" {
		t.Fatalf("first reconcile deleted %s, want the pods of n0 and n1 (maxUnavailable 2)", got)
	}
	if _, err := r.UpgradeBatch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(terminating(t, c)); got != "[agent-n0 agent-n1]" {
		t.Fatalf("second reconcile while pods terminate: %s being deleted, want no more", got)
	}
	s, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Settled || s.UpToDate || s.UpdatedReplicas != 0 || s.UpdateRevision != "57864f86f5" || s.StableRevision != "7bf4fcb7f4" || s.MaxUnavailable != 2 {
		t.Fatalf("status while replacing: %+v", s)
	}
}

func TestUpgradeBatch_deletesNothing(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
	}{
		{name: "template not observed by the DaemonSet controller yet", mutate: func(ds *appsv1.DaemonSet) { ds.Generation = 3 }},
		{name: "handed back (restore patch applied)", mutate: func(ds *appsv1.DaemonSet) {
			delete(ds.Annotations, rolloutsv1beta1.DeploymentOriginalAnnotation)
			ds.Spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
		}},
		{name: "strategy set back to RollingUpdate by hand", mutate: func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := fixture(t, tt.mutate)
			if placed, err := r.UpgradeBatch(context.Background(), 2); err != nil || placed {
				t.Fatalf("UpgradeBatch = %v, %v", placed, err)
			}
			if got := terminating(t, c); len(got) != 0 {
				t.Fatalf("deleted %v", got)
			}
		})
	}
}

func TestClaim_recordsStableRevisionAndOwner(t *testing.T) {
	ctx := context.Background()
	c, r := fixture(t, nil)
	owner := workload.Owner{BatchRelease: "agent", Rollout: "agent"}
	if err := r.Claim(ctx, owner); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "agent"}, ds); err != nil {
		t.Fatal(err)
	}
	if got := ds.Labels[rolloutsv1beta1.StableRevisionLabel]; got != "7bf4fcb7f4" {
		t.Fatalf("stable revision %q, want what the pods run", got)
	}
	if ds.Annotations[rolloutsv1beta1.ControlInfoAnnotation] == "" || ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		t.Fatalf("claimed daemonset: annotations %v strategy %s", ds.Annotations, ds.Spec.UpdateStrategy.Type)
	}
	if p := restoreOf(t, ds); p.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		t.Fatalf("restore patch changed: %+v", p)
	}
}

func TestFinalize_appliesTheRestorePatch(t *testing.T) {
	ctx := context.Background()
	c, r := fixture(t, func(ds *appsv1.DaemonSet) { ds.Labels[rolloutsv1beta1.StableRevisionLabel] = "7bf4fcb7f4" })
	done, err := r.Finalize(ctx, true)
	if err != nil || done {
		t.Fatalf("Finalize(wait) = %v, %v; want handed back, not done", done, err)
	}
	ds := &appsv1.DaemonSet{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "agent"}, ds); err != nil {
		t.Fatal(err)
	}
	s := ds.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil || s.RollingUpdate.MaxUnavailable.String() != "2" {
		t.Fatalf("strategy after Finalize: %+v", s)
	}
	for _, k := range []string{rolloutsv1beta1.DeploymentOriginalAnnotation, rolloutsv1beta1.InProgressingAnnotation} {
		if _, ok := ds.Annotations[k]; ok {
			t.Fatalf("annotation %s left", k)
		}
	}
	if _, ok := ds.Labels[rolloutsv1beta1.StableRevisionLabel]; ok {
		t.Fatal("stable-revision label left")
	}
	if done, err := r.Finalize(ctx, true); err != nil || done {
		t.Fatalf("Finalize(wait) with old pods left = %v, %v; want not done", done, err)
	}
	if done, err := r.Finalize(ctx, false); err != nil || !done {
		t.Fatalf("Finalize(no wait) after hand-back = %v, %v; want done", done, err)
	}
}
