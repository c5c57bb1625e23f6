// Package service keeps the Services of one trafficRoutings entry during a
// release: it narrows the user's stable Service to the stable pods (its
// selector gets the revision label), creates the canary Service
// <service>-canary beside it, and gives both back at the end.
package service

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/handback"
)

// RecordAnnotation on the stable Service keeps, while a release narrows it,
// its original selector and who owned it (a handback.Record).
const RecordAnnotation = "sluice.dev/original-selector"

var _ traffic.Services = (*Services)(nil)

// Services keeps the stable and canary Services of one trafficRoutings
// entry.
type Services struct {
	client client.Client
	reader client.Reader
	t      traffic.Target
}

// New returns the Services of t. It reads through reader (not a cache: a
// stale read could undo a change) and writes through c.
func New(c client.Client, reader client.Reader, t traffic.Target) *Services {
	return &Services{client: c, reader: reader, t: t}
}

func (s *Services) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.t.Namespace, Name: name}
}

func (s *Services) stable(ctx context.Context) (*corev1.Service, error) {
	svc := &corev1.Service{}
	if err := s.reader.Get(ctx, s.key(s.t.Ref.Service), svc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("stable Service %s not found: %w", s.t.Ref.Service, err)
		}
		return nil, fmt.Errorf("reading Service %s: %w", s.t.Ref.Service, err)
	}
	return svc, nil
}

// original returns the stable Service's own selector: while it is
// narrowed, its live selector without sluice's change (so that a key
// someone else sets or removes mid-release keeps their change, see
// handback.Record.Base), else its live selector.
func (s *Services) original(svc *corev1.Service) (map[string]string, *handback.Record, error) {
	rec, err := handback.Read(svc.Annotations, RecordAnnotation)
	if err != nil || rec == nil {
		return svc.Spec.Selector, nil, err
	}
	if rec.Rollout != s.t.Rollout {
		return nil, nil, fmt.Errorf("Service %s is narrowed by Rollout %s: %w", svc.Name, rec.Rollout, traffic.ErrConflict) //nolint:staticcheck // a kind name
	}
	sel, err := selectorBase(svc, rec)
	if err != nil {
		return nil, nil, err
	}
	return sel, rec, nil
}

// selectorBase is the live selector of svc with sluice's change reverted.
func selectorBase(svc *corev1.Service, rec *handback.Record) (map[string]string, error) {
	v, err := rec.Base(svc.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("annotation %s of Service %s: %w", RecordAnnotation, svc.Name, err)
	}
	var sel map[string]string
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &sel)
	}
	if err != nil {
		return nil, fmt.Errorf("annotation %s of Service %s: %w", RecordAnnotation, svc.Name, err)
	}
	return sel, nil
}

// NarrowStable implements traffic.Services: it applies the stable
// Service's selector plus label=revision with server-side apply, keeping
// the original in RecordAnnotation.
func (s *Services) NarrowStable(ctx context.Context, label, revision string) (bool, error) {
	if s.t.DisableCanaryService {
		return true, nil
	}
	if label == "" || revision == "" {
		return false, fmt.Errorf("the stable revision of Service %s is not known yet", s.t.Ref.Service)
	}
	svc, err := s.stable(ctx)
	if err != nil {
		return false, err
	}
	orig, rec, err := s.original(svc)
	if err != nil {
		return false, err
	}
	if len(orig) == 0 {
		return false, fmt.Errorf("Service %s has no selector; sluice routes only Services that select pods: %w", svc.Name, traffic.ErrUnsupported) //nolint:staticcheck // a kind name
	}
	want := Narrowed(orig, label, revision)
	if rec != nil && maps.Equal(svc.Spec.Selector, want) {
		return true, nil
	}
	if rec == nil {
		if rec, err = handback.New(s.t.Rollout, orig, svc.ManagedFields, "spec", "selector"); err != nil {
			return false, err
		}
	} else if rec.Value, err = json.Marshal(orig); err != nil {
		return false, err
	}
	if err := rec.SetApplied(want); err != nil {
		return false, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": svc.Name, "namespace": svc.Namespace,
			"annotations": map[string]any{RecordAnnotation: rec.Encode()},
		},
		"spec": map[string]any{"selector": toAny(want)},
	}}
	if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(rolloutsv1beta1.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("narrowing Service %s: %w", svc.Name, err)
	}
	return false, nil
}

// Narrowed is selector sel that also requires label=revision.
func Narrowed(sel map[string]string, label, revision string) map[string]string {
	out := maps.Clone(sel)
	if out == nil {
		out = map[string]string{}
	}
	out[label] = revision
	return out
}

// RestoreStable implements traffic.Services: it writes the selector
// without sluice's change (the recorded one, with whatever someone else
// changed since) back under the field manager that owned it, if the
// Service is still as read, and drops the record.
func (s *Services) RestoreStable(ctx context.Context) (bool, error) {
	svc := &corev1.Service{}
	if err := s.reader.Get(ctx, s.key(s.t.Ref.Service), svc); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil // nothing left to restore
		}
		return false, fmt.Errorf("reading Service %s: %w", s.t.Ref.Service, err)
	}
	rec, err := handback.Read(svc.Annotations, RecordAnnotation)
	if err != nil {
		return false, err
	}
	if rec == nil || rec.Rollout != s.t.Rollout {
		return true, nil
	}
	sel, err := selectorBase(svc, rec)
	if err != nil {
		return false, err
	}
	var value any
	if sel != nil {
		value = sel
	}
	patch, err := handback.RestorePatch(value, svc.ResourceVersion, "/spec/selector", RecordAnnotation)
	if err != nil {
		return false, err
	}
	if err := s.client.Patch(ctx, svc, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(rec.Owner())); err != nil {
		return false, fmt.Errorf("restoring the selector of Service %s: %w", svc.Name, err)
	}
	return false, nil
}

// EnsureCanary implements traffic.Services: it applies the canary Service
// built by Canary from the stable one.
func (s *Services) EnsureCanary(ctx context.Context, label, revision string) (bool, error) {
	if s.t.DisableCanaryService {
		return true, nil
	}
	if label == "" || revision == "" {
		return false, fmt.Errorf("the new revision's pods are not known yet for Service %s", traffic.CanaryServiceName(s.t.Ref.Service))
	}
	stable, err := s.stable(ctx)
	if err != nil {
		return false, err
	}
	orig, _, err := s.original(stable)
	if err != nil {
		return false, err
	}
	if len(orig) == 0 {
		return false, fmt.Errorf("Service %s has no selector; sluice routes only Services that select pods: %w", stable.Name, traffic.ErrUnsupported) //nolint:staticcheck // a kind name
	}
	want := Canary(stable, orig, label, revision)
	want.OwnerReferences = []metav1.OwnerReference{s.t.Owner}
	cur := &corev1.Service{}
	switch err := s.reader.Get(ctx, s.key(want.Name), cur); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, fmt.Errorf("reading Service %s: %w", want.Name, err)
	case !traffic.OwnedBy(cur.OwnerReferences, s.t.Owner):
		return false, fmt.Errorf("Service %s exists and is not sluice's canary Service of Rollout %s: %w", want.Name, s.t.Rollout, traffic.ErrConflict) //nolint:staticcheck // a kind name
	case sameCanary(cur, want):
		return true, nil
	}
	u, err := toUnstructured(want)
	if err != nil {
		return false, err
	}
	if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(rolloutsv1beta1.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying Service %s: %w", want.Name, err)
	}
	return false, nil
}

// RemoveCanary implements traffic.Services.
func (s *Services) RemoveCanary(ctx context.Context) (bool, error) {
	if s.t.DisableCanaryService {
		return true, nil
	}
	cur := &corev1.Service{}
	switch err := s.reader.Get(ctx, s.key(traffic.CanaryServiceName(s.t.Ref.Service)), cur); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the canary Service: %w", err)
	case !traffic.OwnedBy(cur.OwnerReferences, s.t.Owner):
		return true, nil // not ours: leave it
	case cur.DeletionTimestamp != nil:
		return false, nil
	}
	if err := s.client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("deleting Service %s: %w", cur.Name, err)
	}
	return false, nil
}

// sameCanary reports whether the live canary Service cur already is what
// want describes, ignoring what the API server fills in (cluster IPs, node
// ports).
func sameCanary(cur, want *corev1.Service) bool {
	if !maps.Equal(cur.Spec.Selector, want.Spec.Selector) || cur.Spec.Type != want.Spec.Type || len(cur.Spec.Ports) != len(want.Spec.Ports) {
		return false
	}
	for i := range want.Spec.Ports {
		c, w := cur.Spec.Ports[i], want.Spec.Ports[i]
		c.NodePort = 0
		if !apiequality.Semantic.DeepEqual(c, w) {
			return false
		}
	}
	return maps.Equal(cur.Labels, want.Labels)
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}
