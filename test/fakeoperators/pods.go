package fakeoperators

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The pod labels that tell a pod's revision.
const (
	// RevisionLabel carries the revision name (StatefulSet-like kinds and
	// CloneSets) or hash (DaemonSets).
	RevisionLabel = "controller-revision-hash"
	// TemplateHashLabel carries a CloneSet pod's revision hash, without the
	// CloneSet's name.
	TemplateHashLabel = "pod-template-hash"
)

// templateHash is a short, deterministic hash of a pod template: the same
// template always gives the same revision, so a template set back to an
// earlier one is that earlier revision again, as with ControllerRevisions.
func templateHash(template map[string]any) string {
	b, _ := json.Marshal(template)
	h := fnv.New32a()
	_, _ = h.Write(b)
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// history remembers the template of each revision seen, standing in for
// ControllerRevisions.
type history struct {
	mu        sync.Mutex
	templates map[string]map[string]any
}

func (h *history) put(rev string, template map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.templates == nil {
		h.templates = map[string]map[string]any{}
	}
	h.templates[rev] = template
}

// get returns the template of rev, or fallback when rev is unknown.
func (h *history) get(rev string, fallback map[string]any) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.templates[rev]; ok {
		return t
	}
	return fallback
}

// newPod builds a pod of owner from template, with extra labels.
func newPod(owner *unstructured.Unstructured, name string, template map[string]any, extra map[string]string, node string) (*corev1.Pod, error) {
	t := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(template, t); err != nil {
		return nil, fmt.Errorf("spec.template of %s: %w", owner.GetName(), err)
	}
	labels := map[string]string{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	for k, v := range extra {
		labels[k] = v
	}
	controller := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: owner.GetNamespace(), Labels: labels, Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
				Controller: &controller, BlockOwnerDeletion: &controller,
			}},
		},
		Spec: t.Spec,
	}
	if node != "" {
		pod.Spec.NodeName = node
	}
	return pod, nil
}

// ownedPods lists, fresh from the API server, the pods owner controls.
func ownedPods(ctx context.Context, reader client.Reader, owner *unstructured.Unstructured) ([]corev1.Pod, error) {
	raw, _, _ := unstructured.NestedMap(owner.Object, "spec", "selector")
	sel := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, sel); err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, err
	}
	list := &corev1.PodList{}
	if err := reader.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, p)
		}
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// patchStatus writes status to owner's status subresource when it changed.
func patchStatus(ctx context.Context, c client.Client, owner *unstructured.Unstructured, status map[string]any) error {
	if old, ok := owner.Object["status"].(map[string]any); ok && equality.Semantic.DeepEqual(normalize(old), normalize(status)) {
		return nil
	}
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, owner, client.RawPatch(types.MergePatchType, b), client.FieldOwner(FieldManager))
}

// normalize round-trips v through JSON, so numbers compare alike.
func normalize(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}

// intField reads an integer field, or def.
func intField(u *unstructured.Unstructured, def int64, path ...string) int64 {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !found {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return def
}
