package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// Given a Deployment of 3 pods whose step of 2 new pods is placed and held
// (the hold gave the new pods back the user's minReadySeconds, so they are
// available), re-armed by a reconcile that read an older copy of its
// ReplicaSets
// When the informer cache still shows the new ReplicaSet as it was during
// the move (held timing, 1 replica, none available) and the batch is
// planned again
// Then the Deployment is not unpaused: Kubernetes' rolling update would
// count the new pods as available and run past the batch (CI saw 3 of 3
// pods on the new revision at a step of 2). The unpause is decided on the
// ReplicaSet as the API server holds it.
func TestUpgradeBatch_staleReplicaSetInTheCache_neverUnpauses(t *testing.T) {
	d := heldWeb(3, true, 0, 1)
	sel := d.Spec.Selector
	d.Status.ObservedGeneration = d.Generation
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1", Controller: ptr(true)}}
	rs := func(name, image string, replicas, available int32, minReady int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "web"}, OwnerReferences: owner},
			Spec:       appsv1.ReplicaSetSpec{Replicas: ptr(replicas), Selector: sel, Template: podTemplate(image), MinReadySeconds: minReady},
			Status:     appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: available},
		}
	}
	newName := "web-" + revisions.TemplateHash(&d.Spec.Template, nil)
	// The API server: the batch is placed (2 new, 1 old), the new pods
	// available, Kubernetes not yet done propagating the re-armed timing.
	api := fake.NewClientBuilder().WithObjects(d.DeepCopy(), rs(newName, "web:v2", 2, 2, 0), rs("web-v1", "web:v1", 1, 1, 0)).Build()
	// The cache: both ReplicaSets as they were in the middle of the move.
	cache := fake.NewClientBuilder().WithObjects(d.DeepCopy(), rs(newName, "web:v2", 1, 0, heldMinReadySeconds), rs("web-v1", "web:v1", 2, 2, 0)).Build()
	reader := &ownwrites.Reader{Cache: cache, API: api, Tracker: ownwrites.NewTracker(), Scheme: api, Cached: map[schema.GroupVersionKind]bool{
		appsv1.SchemeGroupVersion.WithKind("Deployment"): true, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"): true,
	}}
	r := New(api, reader, types.NamespacedName{Namespace: "shop", Name: "web"})
	if _, err := r.UpgradeBatch(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	after := &appsv1.Deployment{}
	if err := api.Get(t.Context(), client.ObjectKeyFromObject(d), after); err != nil {
		t.Fatal(err)
	}
	if !after.Spec.Paused {
		t.Fatalf("unpaused on the cached copy: maxSurge %v maxUnavailable %v; Kubernetes would release past the batch",
			after.Spec.Strategy.RollingUpdate.MaxSurge, after.Spec.Strategy.RollingUpdate.MaxUnavailable)
	}
}

// Given a Deployment of 10 pods unpaused for a batch of 5 (armed: sluice
// confirmed from the API server that no new pod counts as available before
// it unpaused), its new ReplicaSet just scaled by Kubernetes' rolling update
// to a generation the ReplicaSet controller has not observed yet
// When the batch is planned again
// Then the Deployment is not paused again: the new generation is
// Kubernetes' scaling, which cannot make a new pod available while the held
// minReadySeconds stays. Re-arming cost a Deployment write, an uncached
// ReplicaSet read and another unpause each time Kubernetes scaled the set
// (the 100 x 10 bench: 36 Deployment patches per release, 3.7 of them
// refused on a conflict).
func TestUpgradeBatch_replicaSetScaledByKubernetes_staysUnpaused(t *testing.T) {
	d := heldWeb(10, false, 2, 3)
	sel := d.Spec.Selector
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1", Controller: ptr(true)}}
	newSet := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-" + revisions.TemplateHash(&d.Spec.Template, nil), Namespace: "shop", Generation: 3,
			Labels: map[string]string{"app": "web"}, OwnerReferences: owner,
		},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr[int32](5), Selector: sel, Template: podTemplate("web:v2"), MinReadySeconds: heldMinReadySeconds},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: 1},
	}
	oldSet := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-v1", Namespace: "shop", Generation: 4, Labels: map[string]string{"app": "web"}, OwnerReferences: owner},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr[int32](7), Selector: sel, Template: podTemplate("web:v1")},
		Status:     appsv1.ReplicaSetStatus{ObservedGeneration: 4, Replicas: 7, ReadyReplicas: 7, AvailableReplicas: 7},
	}
	api := fake.NewClientBuilder().WithObjects(d, newSet, oldSet).Build()
	r := New(api, api, types.NamespacedName{Namespace: "shop", Name: "web"})
	if _, err := r.UpgradeBatch(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	after := &appsv1.Deployment{}
	if err := api.Get(t.Context(), client.ObjectKeyFromObject(d), after); err != nil {
		t.Fatal(err)
	}
	if after.Spec.Paused {
		t.Fatalf("paused again mid-batch (maxSurge %v, maxUnavailable %v): the batch was armed when it was unpaused",
			after.Spec.Strategy.RollingUpdate.MaxSurge, after.Spec.Strategy.RollingUpdate.MaxUnavailable)
	}
}

// heldWeb is the Deployment shop/web of replicas pods released in place on
// web:v2, with the held timing and the given pause and bounds.
func heldWeb(replicas int32, paused bool, surge, unavailable int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "d1", ResourceVersion: "10", Annotations: map[string]string{
			rolloutsv1beta1.DeploymentOriginalAnnotation: `{"spec":{"paused":false,"minReadySeconds":0,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`,
			rolloutsv1beta1.InProgressingAnnotation:      `{"rolloutName":"web"}`,
		}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate("web:v2"), Paused: paused,
			MinReadySeconds: heldMinReadySeconds, ProgressDeadlineSeconds: ptr[int32](heldProgressDeadlineSeconds),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr(intstr.FromInt32(surge)), MaxUnavailable: ptr(intstr.FromInt32(unavailable)),
			}},
		},
	}
}
