package fakeoperators

import (
	"context"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DaemonSetGVK is the kind the Advanced DaemonSet double serves.
var DaemonSetGVK = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "DaemonSet"}

// daemonSet is the TEST DOUBLE of OpenKruise's Advanced DaemonSet
// controller: one pod per matching node, named <name>-<node> and labelled
// controller-revision-hash=<hash>; spec.updateStrategy.rollingUpdate.
// partition nodes keep the old revision, the others get pods of the new
// template (recreated all at once) unless rollingUpdate.paused.
type daemonSet struct {
	nodes     map[string]string
	client    client.Client
	reader    client.Reader
	revisions history

	mu     sync.Mutex
	stable map[types.NamespacedName]string // the revision all pods last ran
}

// DaemonSet returns the Advanced DaemonSet double, running pods on the
// nodes with the labels nodes.
func DaemonSet(nodes map[string]string) Controller {
	return &daemonSet{nodes: nodes, stable: map[types.NamespacedName]string{}}
}

func (r *daemonSet) setup(mgr ctrl.Manager) error {
	r.client, r.reader = mgr.GetClient(), mgr.GetAPIReader()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(DaemonSetGVK)
	return ctrl.NewControllerManagedBy(mgr).Named("fake-advanced-daemonset").For(u).Owns(&corev1.Pod{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *daemonSet) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(DaemonSetGVK)
	if err := r.reader.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	nodeList := &corev1.NodeList{}
	if err := r.reader.List(ctx, nodeList, client.MatchingLabels(r.nodes)); err != nil {
		return ctrl.Result{}, err
	}
	nodes := make([]string, 0, len(nodeList.Items))
	for _, n := range nodeList.Items {
		nodes = append(nodes, n.Name)
	}
	sort.Strings(nodes)
	template, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	update := templateHash(template)
	r.revisions.put(update, template)
	kept := min(max(int(intField(u, 0, "spec", "updateStrategy", "rollingUpdate", "partition")), 0), len(nodes))
	paused, _, _ := unstructured.NestedBool(u.Object, "spec", "updateStrategy", "rollingUpdate", "paused")
	r.mu.Lock()
	stable, ok := r.stable[req.NamespacedName]
	r.mu.Unlock()
	if !ok {
		stable = update
	}
	pods, err := ownedPods(ctx, r.reader, u)
	if err != nil {
		return ctrl.Result{}, err
	}
	byNode := map[string]*corev1.Pod{}
	for i := range pods {
		byNode[pods[i].Spec.NodeName] = &pods[i]
	}
	expected := len(nodes) - kept
	updated := 0
	for _, n := range nodes {
		if p := byNode[n]; p != nil && p.Labels[RevisionLabel] == update {
			updated++
		}
	}
	// Update from the last node down, creating missing pods on the
	// revision the partition gives their node.
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		p := byNode[n]
		switch {
		case p == nil:
			rev := stable
			if updated < expected {
				rev, updated = update, updated+1
			}
			pod, err := newPod(u, u.GetName()+"-"+n, r.revisions.get(rev, template), map[string]string{RevisionLabel: rev}, n)
			if err != nil {
				return ctrl.Result{}, err
			}
			if err := r.client.Create(ctx, pod, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
				return ctrl.Result{}, err
			}
		case p.DeletionTimestamp == nil && p.Labels[RevisionLabel] != update && updated < expected && !paused:
			if err := client.IgnoreNotFound(r.client.Delete(ctx, p)); err != nil {
				return ctrl.Result{}, err
			}
			updated++
		}
	}
	return ctrl.Result{}, patchStatus(ctx, r.client, u, r.status(req.NamespacedName, u, nodes, byNode, update))
}

// status is what an Advanced DaemonSet reports.
func (r *daemonSet) status(key types.NamespacedName, u *unstructured.Unstructured, nodes []string, byNode map[string]*corev1.Pod, update string) map[string]any {
	var scheduled, ready, updated int64
	for _, n := range nodes {
		p := byNode[n]
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		scheduled++
		if podReady(p) {
			ready++
		}
		if p.Labels[RevisionLabel] == update {
			updated++
		}
	}
	if updated == int64(len(nodes)) {
		r.mu.Lock()
		r.stable[key] = update
		r.mu.Unlock()
	}
	return map[string]any{
		"observedGeneration":     u.GetGeneration(),
		"desiredNumberScheduled": int64(len(nodes)),
		"currentNumberScheduled": scheduled,
		"numberMisscheduled":     int64(0),
		"numberReady":            ready,
		"numberAvailable":        ready,
		"updatedNumberScheduled": updated,
		"daemonSetHash":          update,
	}
}
