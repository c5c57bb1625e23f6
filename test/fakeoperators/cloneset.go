package fakeoperators

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CloneSetGVK is the kind the CloneSet double serves.
var CloneSetGVK = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}

// cloneSet is the TEST DOUBLE of OpenKruise's CloneSet controller: pods
// named <name>-<random>, labelled controller-revision-hash=<name>-<hash>
// and pod-template-hash=<hash>; spec.updateStrategy.partition (a number or
// a percentage of replicas, rounded up) pods keep the old revision, the
// others are replaced by pods of the new template unless
// spec.updateStrategy.paused, within maxSurge, maxUnavailable and
// minReadySeconds as planCloneSet reads them.
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
func (r *cloneSet) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(CloneSetGVK)
	if err := r.reader.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	replicas := int(intField(u, 1, "spec", "replicas"))
	paused, _, _ := unstructured.NestedBool(u.Object, "spec", "updateStrategy", "paused")
	kept := min(max(scaled(u, replicas, true, intstr.FromInt32(0), "partition"), 0), replicas)
	// As OpenKruise: paused uses no surge, and maxUnavailable rounds up
	// when there is no surge.
	surge := 0
	if !paused {
		surge = max(scaled(u, replicas, true, intstr.FromInt32(0), "maxSurge"), 0)
	}
	unavailable := max(scaled(u, replicas, surge == 0, intstr.FromString("20%"), "maxUnavailable"), 0)
	minReady := time.Duration(intField(u, 0, "spec", "minReadySeconds")) * time.Second
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
	now := time.Now()
	in := cloneSetInput{replicas: replicas, expected: replicas - kept, surge: surge, unavailable: unavailable, paused: paused}
	live := map[string]*corev1.Pod{}
	var wake time.Duration
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		live[p.Name] = p
		ok, after := availableAt(p, minReady, now)
		if after > 0 && (wake == 0 || after < wake) {
			wake = after
		}
		in.pods = append(in.pods, clonePod{name: p.Name, updated: p.Labels[RevisionLabel] == update, available: ok})
	}
	plan := planCloneSet(in)
	for _, name := range plan.remove {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, live[name])); err != nil {
			return ctrl.Result{}, err
		}
		delete(live, name)
	}
	keep := make([]*corev1.Pod, 0, len(live)+plan.createUpdated+plan.createCurrent)
	for _, p := range live {
		keep = append(keep, p)
	}
	for i := range plan.createUpdated + plan.createCurrent {
		rev := update
		if i >= plan.createUpdated {
			rev = current
		}
		pod, err := newPod(u, u.GetName()+"-"+rand.String(5), r.revisions.get(rev, template),
			map[string]string{RevisionLabel: rev, TemplateHashLabel: shortHash(rev)}, "")
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Create(ctx, pod, client.FieldOwner(FieldManager)); err != nil {
			return ctrl.Result{}, err
		}
		keep = append(keep, pod)
	}
	status := cloneSetStatus(u, keep, replicas, replicas-kept, current, update, minReady, now)
	if err := patchStatus(ctx, r.client, u, status); err != nil {
		return ctrl.Result{}, err
	}
	// A pod ready for less than minReadySeconds becomes available later
	// without any event: look again then (not for a minReadySeconds
	// nobody waits out).
	if wake > 0 && wake < time.Hour {
		return ctrl.Result{RequeueAfter: wake}, nil
	}
	return ctrl.Result{}, nil
}

// availableAt reports whether p is available at now: Ready for at least
// minReady. When it is Ready but not yet available, after is how long
// until it is.
func availableAt(p *corev1.Pod, minReady time.Duration, now time.Time) (ok bool, after time.Duration) {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady || c.Status != corev1.ConditionTrue {
			continue
		}
		if minReady == 0 {
			return true, 0
		}
		if c.LastTransitionTime.IsZero() {
			return false, 0
		}
		at := c.LastTransitionTime.Add(minReady)
		if !now.Before(at) {
			return true, 0
		}
		return false, at.Sub(now)
	}
	return false, 0
}

// scaled resolves spec.updateStrategy.<field> (a number or a percentage,
// def when unset) against replicas.
func scaled(u *unstructured.Unstructured, replicas int, roundUp bool, def intstr.IntOrString, field string) int {
	v := def
	raw, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "updateStrategy", field)
	switch x := raw.(type) {
	case string:
		v = intstr.FromString(x)
	case int64, float64:
		v = intstr.FromInt32(int32(intField(u, 0, "spec", "updateStrategy", field))) //nolint:gosec // test double
	}
	n, _ := intstr.GetScaledValueFromIntOrPercent(&v, replicas, roundUp)
	return n
}

// cloneSetStatus is what a CloneSet reports for its live pods.
func cloneSetStatus(u *unstructured.Unstructured, pods []*corev1.Pod, replicas, expected int, current, update string,
	minReady time.Duration, now time.Time) map[string]any {
	var ready, available, updated, updatedReady int64
	for _, p := range pods {
		isReady := podReady(p)
		isAvailable, _ := availableAt(p, minReady, now)
		if isReady {
			ready++
		}
		if isAvailable {
			available++
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
		"availableReplicas":       available,
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
