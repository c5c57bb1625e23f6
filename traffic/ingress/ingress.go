// Package ingress shifts traffic through an Ingress controller's canary
// annotations: beside the user's Ingress it creates <ingress>-canary, a copy
// of the rules that lead to the stable Service, pointed at the canary
// Service and annotated for the Ingress class (nginx, higress, mse,
// aliyun-alb). The user's Ingress is never changed; at the end the canary
// Ingress is deleted.
package ingress

import (
	"context"
	"fmt"
	"maps"

	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

// legacyClassAnnotation names the Ingress class on Ingresses that predate
// spec.ingressClassName; the canary Ingress keeps it.
const legacyClassAnnotation = "kubernetes.io/ingress.class"

var _ traffic.Provider = (*Router)(nil)

// Router drives the canary Ingress of one trafficRoutings entry.
type Router struct {
	client client.Client
	reader client.Reader
	t      traffic.Target
}

// New returns the Router of t, which must name an Ingress of a built-in
// class. It reads through reader and writes through c.
func New(c client.Client, reader client.Reader, t traffic.Target) (*Router, error) {
	if t.Ref.Ingress == nil {
		return nil, fmt.Errorf("ingress.name is empty: name the Ingress that sends the requests of Service %s", t.Ref.Service)
	}
	if _, err := lookup(t.Ref.Ingress.ClassType); err != nil {
		return nil, err
	}
	return &Router{client: c, reader: reader, t: t}, nil
}

// CanaryName is the name of the canary Ingress beside the Ingress named
// name.
func CanaryName(name string) string {
	return name + "-canary"
}

// EnsureRoutes implements traffic.Provider.
func (r *Router) EnsureRoutes(ctx context.Context, d traffic.Desired) (bool, error) {
	stable := &networkingv1.Ingress{}
	if err := r.reader.Get(ctx, r.key(r.t.Ref.Ingress.Name), stable); err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("ingress %s not found: %w", r.t.Ref.Ingress.Name, err)
		}
		return false, fmt.Errorf("reading ingress %s: %w", r.t.Ref.Ingress.Name, err)
	}
	annotations, err := Annotations(r.t.Ref.Ingress.ClassType, d)
	if err != nil {
		return false, fmt.Errorf("ingress %s: %w", stable.Name, err)
	}
	want, err := Canary(stable, d.StableService, d.CanaryService, annotations)
	if err != nil {
		return false, err
	}
	want.OwnerReferences = []metav1.OwnerReference{r.t.Owner}
	cur := &networkingv1.Ingress{}
	switch err := r.reader.Get(ctx, r.key(want.Name), cur); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, fmt.Errorf("reading ingress %s: %w", want.Name, err)
	case !traffic.OwnedBy(cur.OwnerReferences, r.t.Owner):
		return false, fmt.Errorf("ingress %s exists and is not the canary Ingress of Rollout %s: %w", want.Name, r.t.Rollout, traffic.ErrConflict)
	case maps.Equal(cur.Annotations, want.Annotations) && maps.Equal(cur.Labels, want.Labels) &&
		apiequality.Semantic.DeepEqual(cur.Spec, want.Spec):
		return true, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return false, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(rolloutsv1beta1.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying ingress %s: %w", want.Name, err)
	}
	return false, nil
}

// Finalize implements traffic.Provider: it deletes the canary Ingress.
func (r *Router) Finalize(ctx context.Context) (bool, error) {
	cur := &networkingv1.Ingress{}
	switch err := r.reader.Get(ctx, r.key(CanaryName(r.t.Ref.Ingress.Name)), cur); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the canary ingress: %w", err)
	case !traffic.OwnedBy(cur.OwnerReferences, r.t.Owner):
		return true, nil // not ours: leave it
	case cur.DeletionTimestamp != nil:
		return false, nil
	}
	if err := r.client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("deleting ingress %s: %w", cur.Name, err)
	}
	return false, nil
}

func (r *Router) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: r.t.Namespace, Name: name}
}

// Canary builds the canary Ingress of stable: the same class and TLS, the
// rules' paths whose backend is the Service named from, pointed at the
// Service named to, and the given annotations (plus the legacy class
// annotation when stable has one). It fails when no path of stable leads
// to from.
func Canary(stable *networkingv1.Ingress, from, to string, annotations map[string]string) (*networkingv1.Ingress, error) {
	out := &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   stable.Namespace,
			Name:        CanaryName(stable.Name),
			Labels:      traffic.CopyableLabels(stable.Labels),
			Annotations: maps.Clone(annotations),
		},
		Spec: networkingv1.IngressSpec{
			IngressClassName: stable.Spec.IngressClassName,
			TLS:              stable.Spec.TLS,
		},
	}
	if v, ok := stable.Annotations[legacyClassAnnotation]; ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[legacyClassAnnotation] = v
	}
	for _, rule := range stable.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		var paths []networkingv1.HTTPIngressPath
		for _, p := range rule.HTTP.Paths {
			if p.Backend.Service == nil || p.Backend.Service.Name != from {
				continue
			}
			p = *p.DeepCopy()
			p.Backend.Service.Name = to
			paths = append(paths, p)
		}
		if len(paths) > 0 {
			out.Spec.Rules = append(out.Spec.Rules, networkingv1.IngressRule{
				Host: rule.Host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
			})
		}
	}
	if len(out.Spec.Rules) == 0 {
		return nil, fmt.Errorf("ingress %s has no path leading to Service %s", stable.Name, from)
	}
	return out, nil
}
