package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/test/flux"
)

// canaryWeightAnnotation is the weight nginx gives a canary Ingress.
const canaryWeightAnnotation = "nginx.ingress.kubernetes.io/canary-weight"

// world is what the GitOps story reads from the cluster on each tick:
// the Rollout, Deployment and pods, where the Services and Ingresses send
// requests, and what Flux applied.
type world struct {
	*snapshot
	// stable and canary are the Services checkout and checkout-canary;
	// nil when absent.
	stable, canary *corev1.Service
	// canaryIngress is checkout-canary, which sluice creates beside the
	// Ingress checkout during a release; nil when absent.
	canaryIngress *networkingv1.Ingress
	// applied is the commit Flux's Kustomization applied last, "" for
	// none; suspended says whether it is suspended.
	applied   string
	suspended bool
}

// observeWorld reads the world of the app key, applied by the
// Kustomization kustomization in key's namespace.
func observeWorld(ctx context.Context, c client.Reader, key types.NamespacedName, kustomization string) (*world, error) {
	s, err := observe(ctx, c, key)
	if err != nil {
		return nil, err
	}
	w := &world{snapshot: s}
	canaryKey := types.NamespacedName{Namespace: key.Namespace, Name: key.Name + "-canary"}
	stable, canary, ingress := &corev1.Service{}, &corev1.Service{}, &networkingv1.Ingress{}
	if ok, err := getIfExists(ctx, c, key, stable); err != nil {
		return nil, err
	} else if ok {
		w.stable = stable
	}
	if ok, err := getIfExists(ctx, c, canaryKey, canary); err != nil {
		return nil, err
	} else if ok {
		w.canary = canary
	}
	if ok, err := getIfExists(ctx, c, canaryKey, ingress); err != nil {
		return nil, err
	} else if ok {
		w.canaryIngress = ingress
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(flux.KustomizationGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: kustomization}, k); err != nil {
		return nil, fmt.Errorf("reading Kustomization %s: %w", kustomization, err)
	}
	revision, _, _ := unstructured.NestedString(k.Object, "status", "lastAppliedRevision")
	if _, sha, ok := strings.Cut(revision, "@sha1:"); ok {
		w.applied = sha
	}
	w.suspended, _, _ = unstructured.NestedBool(k.Object, "spec", "suspend")
	return w, nil
}

// getIfExists reads key into obj and reports whether it exists.
func getIfExists(ctx context.Context, c client.Reader, key types.NamespacedName, obj client.Object) (bool, error) {
	switch err := c.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %T %s: %w", obj, key, err)
	}
	return true, nil
}

// canaryWeight is the share of requests the canary Ingress sends to the
// new pods, 0 without one.
func (w *world) canaryWeight() int {
	if w.canaryIngress == nil {
		return 0
	}
	n, err := strconv.Atoi(w.canaryIngress.Annotations[canaryWeightAnnotation])
	if err != nil {
		return 0
	}
	return n
}

// selects returns the image tags of the live pods svc selects, sorted, each
// once; none for a nil Service.
func (w *world) selects(svc *corev1.Service) []string {
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	seen := map[string]bool{}
	for i := range w.pods {
		p := &w.pods[i]
		if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) {
			seen[imageTag(p.Spec.Containers[0].Image)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// podsByTag counts the live pods per image tag.
func (w *world) podsByTag() map[string]int {
	out := map[string]int{}
	for _, r := range w.revisions() {
		if r.Pods > 0 {
			out[r.Name] = r.Pods
		}
	}
	return out
}

// onStable reports every pod and all traffic on the stable version tag:
// each live pod runs it and is ready, no canary route carries requests, and
// the stable Service selects only its pods.
func (w *world) onStable(tag string) bool {
	d := w.deployment
	if d == nil || d.Spec.Replicas == nil || w.canaryWeight() != 0 {
		return false
	}
	revs := w.revisions()
	if len(revs) != 1 || revs[0].Name != tag || revs[0].Ready != int(*d.Spec.Replicas) {
		return false
	}
	sel := w.selects(w.stable)
	return len(sel) == 1 && sel[0] == tag
}

// traffic describes, in one line, where the Ingress sends requests.
func (w *world) traffic() string {
	if w.stable == nil {
		return "no Service yet"
	}
	stable := fmt.Sprintf("Service %s (%s)", w.stable.Name, tags(w.selects(w.stable)))
	weight := w.canaryWeight()
	if w.canaryIngress == nil || weight == 0 {
		return "Ingress checkout: 100% → " + stable
	}
	canary := "Service " + w.canaryIngress.Name
	if w.canary != nil {
		canary = fmt.Sprintf("Service %s (%s)", w.canary.Name, tags(w.selects(w.canary)))
	}
	return fmt.Sprintf("Ingress checkout: %d%% → %s, %d%% → %s", 100-weight, stable, weight, canary)
}

// selectors describes the stable Service's selector: narrowed to a
// revision during a release, as written in Git otherwise.
func (w *world) selectors() string {
	if w.stable == nil {
		return ""
	}
	keys := make([]string, 0, len(w.stable.Spec.Selector))
	for k, v := range w.stable.Spec.Selector {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	out := "Service " + w.stable.Name + " selects " + strings.Join(keys, ",")
	if w.canary != nil {
		out += "; " + w.canary.Name + " exists"
	}
	return out
}

// fluxLine describes what Flux applied.
func (w *world) fluxLine(names func(string) string) string {
	if w.applied == "" {
		return "nothing applied yet"
	}
	out := "applied " + names(w.applied)
	if w.suspended {
		out += "; suspended (flux suspend kustomization apps)"
	}
	return out
}

// tags lists image tags, or says there are none.
func tags(t []string) string {
	if len(t) == 0 {
		return "no pods"
	}
	return strings.Join(t, ", ")
}
