package fakeoperators

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CloneSetGVK is the kind the CloneSet double serves.
var CloneSetGVK = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}

// cloneSet is the TEST DOUBLE of OpenKruise's CloneSet controller: pods
// named <name>-<random>, labelled controller-revision-hash=<name>-<hash>
// and pod-template-hash=<hash>; spec.updateStrategy.partition (a number or
// a percentage of replicas, rounded up) pods keep the old revision, the
// others are recreated from the new template (all at once) unless
// spec.updateStrategy.paused.
type cloneSet struct {
	client    client.Client
	reader    client.Reader
	revisions history
}

// CloneSet returns the CloneSet double.
func CloneSet() Controller { return &cloneSet{} }

func (r *cloneSet) setup(mgr ctrl.Manager) error {
	r.client, r.reader = mgr.GetClient(), mgr.GetAPIReader()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CloneSetGVK)
	return ctrl.NewControllerManagedBy(mgr).Named("fake-cloneset").For(u).Owns(&corev1.Pod{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *cloneSet) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CloneSetGVK)
	if err := r.reader.Get(ctx, req.NamespacedName, u); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	replicas := int(intField(u, 1, "spec", "replicas"))
	paused, _, _ := unstructured.NestedBool(u.Object, "spec", "updateStrategy", "paused")
	kept := 0
	if raw, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "updateStrategy", "partition"); found && raw != nil {
		v := intstr.FromInt32(int32(intField(u, 0, "spec", "updateStrategy", "partition"))) //nolint:gosec // test double
		if s, ok := raw.(string); ok {
			v = intstr.FromString(s)
		}
		n, _ := intstr.GetScaledValueFromIntOrPercent(&v, replicas, true)
		kept = min(max(n, 0), replicas)
	}
	template, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	hash := templateHash(template)
	update := u.GetName() + "-" + hash
	r.revisions.put(update, template)
	current, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision")
	if current == "" {
		current = update
	}
	pods, err := ownedPods(ctx, r.reader, u)
	if err != nil {
		return reconcile.Result{}, err
	}
	var live, old []*corev1.Pod
	for i := range pods {
		if p := &pods[i]; p.DeletionTimestamp == nil {
			live = append(live, p)
			if p.Labels[RevisionLabel] != update {
				old = append(old, p)
			}
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].Name < old[j].Name })
	expected := replicas - kept
	updated := len(live) - len(old)
	remove := map[string]bool{}
	for _, p := range old {
		if paused || updated+len(remove) >= expected {
			break
		}
		remove[p.Name] = true // recreated below from the new template
	}
	for _, p := range old {
		if len(live)-len(remove) <= replicas {
			break
		}
		remove[p.Name] = true // scale down, old revision first
	}
	for i := len(live) - 1; i >= 0 && len(live)-len(remove) > replicas; i-- {
		remove[live[i].Name] = true
	}
	var keep []*corev1.Pod
	for _, p := range live {
		if !remove[p.Name] {
			keep = append(keep, p)
			continue
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, p)); err != nil {
			return reconcile.Result{}, err
		}
	}
	updated = 0
	for _, p := range keep {
		if p.Labels[RevisionLabel] == update {
			updated++
		}
	}
	for n := len(keep); n < replicas; n++ {
		rev := update
		if updated >= expected {
			rev = current
		}
		pod, err := newPod(u, u.GetName()+"-"+rand.String(5), r.revisions.get(rev, template),
			map[string]string{RevisionLabel: rev, TemplateHashLabel: shortHash(rev)}, "")
		if err != nil {
			return reconcile.Result{}, err
		}
		if err := r.client.Create(ctx, pod, client.FieldOwner(FieldManager)); err != nil {
			return reconcile.Result{}, err
		}
		if rev == update {
			updated++
		}
		keep = append(keep, pod)
	}
	return reconcile.Result{}, patchStatus(ctx, r.client, u, cloneSetStatus(u, keep, replicas, expected, current, update))
}

// cloneSetStatus is what a CloneSet reports for its live pods.
func cloneSetStatus(u *unstructured.Unstructured, pods []*corev1.Pod, replicas, expected int, current, update string) map[string]any {
	var ready, updated, updatedReady int64
	for _, p := range pods {
		isReady := podReady(p)
		if isReady {
			ready++
		}
		if p.Labels[RevisionLabel] == update {
			updated++
			if isReady {
				updatedReady++
			}
		}
	}
	if updated == int64(replicas) && len(pods) == replicas {
		current = update
	}
	selector, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	return map[string]any{
		"observedGeneration":      u.GetGeneration(),
		"replicas":                int64(len(pods)),
		"readyReplicas":           ready,
		"availableReplicas":       ready,
		"updatedReplicas":         updated,
		"updatedReadyReplicas":    updatedReady,
		"expectedUpdatedReplicas": int64(expected),
		"currentRevision":         current,
		"updateRevision":          update,
		"labelSelector":           labelsString(selector),
	}
}

// shortHash is the hash part of a revision name, what CloneSet pods carry
// in pod-template-hash.
func shortHash(rev string) string {
	for i := len(rev) - 1; i >= 0; i-- {
		if rev[i] == '-' {
			return rev[i+1:]
		}
	}
	return rev
}

func labelsString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ","
		}
		s += k + "=" + m[k]
	}
	return s
}
