package fakeoperators

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statefulSetLike is the TEST DOUBLE of a StatefulSet-like controller: pods
// named <name>-<ordinal>; on a new template, the pods whose ordinal is at
// least spec.updateStrategy.rollingUpdate.partition are recreated from it
// (all at once), the others keep their revision; missing pods below the
// partition are created on the current revision.
type statefulSetLike struct {
	gvk          schema.GroupVersionKind
	updatedReady bool
	client       client.Client
	reader       client.Reader
	revisions    history
}

// StatefulSetLike returns the double for kind gvk. With updatedReady the
// status also counts ready pods of the update revision, as OpenKruise's
// Advanced StatefulSet does; without, it reports what a native StatefulSet
// reports (replicas, readyReplicas, currentReplicas, updatedReplicas,
// currentRevision, updateRevision, observedGeneration).
func StatefulSetLike(gvk schema.GroupVersionKind, updatedReady bool) Controller {
	return &statefulSetLike{gvk: gvk, updatedReady: updatedReady}
}

func (r *statefulSetLike) setup(mgr ctrl.Manager) error {
	r.client, r.reader = mgr.GetClient(), mgr.GetAPIReader()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	return ctrl.NewControllerManagedBy(mgr).
		Named("fake-" + strings.ToLower(r.gvk.Kind) + "-" + r.gvk.Group + "-" + r.gvk.Version).
		For(u).
		Owns(&corev1.Pod{}).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *statefulSetLike) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := r.reader.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	replicas := int(intField(u, 1, "spec", "replicas"))
	partition := int(intField(u, 0, "spec", "updateStrategy", "rollingUpdate", "partition"))
	paused, _, _ := unstructured.NestedBool(u.Object, "spec", "updateStrategy", "rollingUpdate", "paused")
	template, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	update := u.GetName() + "-" + templateHash(template)
	r.revisions.put(update, template)
	current, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision")
	if current == "" {
		current = update
	}
	pods, err := ownedPods(ctx, r.reader, u)
	if err != nil {
		return ctrl.Result{}, err
	}
	byOrdinal := map[int]*corev1.Pod{}
	for i := range pods {
		if ord, ok := ordinal(u.GetName(), pods[i].Name); ok {
			byOrdinal[ord] = &pods[i]
		}
	}
	for ord := range replicas {
		p := byOrdinal[ord]
		if p == nil {
			rev := update
			if ord < partition {
				rev = current
			}
			pod, err := newPod(u, fmt.Sprintf("%s-%d", u.GetName(), ord), r.revisions.get(rev, template), map[string]string{RevisionLabel: rev}, "")
			if err != nil {
				return ctrl.Result{}, err
			}
			if err := r.client.Create(ctx, pod, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
				return ctrl.Result{}, err
			}
			continue
		}
		if p.DeletionTimestamp == nil && ord >= partition && !paused && p.Labels[RevisionLabel] != update {
			if err := client.IgnoreNotFound(r.client.Delete(ctx, p)); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	for ord, p := range byOrdinal {
		if ord >= replicas && p.DeletionTimestamp == nil {
			if err := client.IgnoreNotFound(r.client.Delete(ctx, p)); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	return ctrl.Result{}, patchStatus(ctx, r.client, u, r.status(u, byOrdinal, replicas, current, update))
}

// status is what a StatefulSet reports for the live pods.
func (r *statefulSetLike) status(u *unstructured.Unstructured, byOrdinal map[int]*corev1.Pod, replicas int, current, update string) map[string]any {
	var live, ready, updated, updatedReady, onCurrent int64
	for ord, p := range byOrdinal {
		if ord >= replicas || p.DeletionTimestamp != nil {
			continue
		}
		live++
		isReady := podReady(p)
		if isReady {
			ready++
		}
		switch p.Labels[RevisionLabel] {
		case update:
			updated++
			if isReady {
				updatedReady++
			}
		case current:
			onCurrent++
		}
	}
	if updated == int64(replicas) && live == int64(replicas) {
		current, onCurrent = update, updated
	}
	status := map[string]any{
		"observedGeneration": u.GetGeneration(),
		"replicas":           live,
		"readyReplicas":      ready,
		"currentReplicas":    onCurrent,
		"updatedReplicas":    updated,
		"currentRevision":    current,
		"updateRevision":     update,
	}
	if r.updatedReady {
		status["availableReplicas"] = ready
		status["updatedReadyReplicas"] = updatedReady
	}
	return status
}

// ordinal parses the ordinal of pod name of set.
func ordinal(set, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, set+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}
