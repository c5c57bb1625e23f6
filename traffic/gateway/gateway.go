// Package gateway shifts traffic through a Gateway API HTTPRoute
// (gateway.networking.k8s.io/v1): weights on the rules' backendRefs, and
// matches as additional rules in front of them.
//
// The route's spec.rules is atomic for server-side apply, so sluice applies
// it whole, under its own field manager, and nothing else of the route:
// parentRefs, hostnames, labels and other annotations keep their owners.
// The rules before the release, those sluice wrote and their owner are
// kept in an annotation (see traffic/handback). Each write, and the
// restore at the end, starts from the live rules with only sluice's
// change reverted, so a rule someone adds, edits or removes mid-release
// keeps their change; the restore is written under the owner's name.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/handback"
)

// RecordAnnotation on an HTTPRoute keeps, while a release changes it, its
// rules before the release and who owned them (a handback.Record).
const RecordAnnotation = "sluice.dev/original-rules"

// HTTPRouteKind is the group/version/kind of the routes this package drives.
var HTTPRouteKind = schema.GroupVersionKind{Group: gatewayv1.GroupVersion.Group, Version: gatewayv1.GroupVersion.Version, Kind: "HTTPRoute"}

var _ traffic.Provider = (*Router)(nil)

// Router drives the HTTPRoute of one trafficRoutings entry.
type Router struct {
	client client.Client
	reader client.Reader
	t      traffic.Target
	name   string
}

// New returns the Router of t, which must name an HTTPRoute. It reads
// through reader and writes through c; HTTPRoutes are read and written as
// unstructured objects, so the manager's scheme need not know them and
// clusters without the Gateway API lose nothing.
func New(c client.Client, reader client.Reader, t traffic.Target) (*Router, error) {
	if t.Ref.Gateway == nil || t.Ref.Gateway.HTTPRouteName == nil || *t.Ref.Gateway.HTTPRouteName == "" {
		return nil, fmt.Errorf("gateway.httpRouteName is empty: name the HTTPRoute that sends the requests of Service %s", t.Ref.Service)
	}
	return &Router{client: c, reader: reader, t: t, name: *t.Ref.Gateway.HTTPRouteName}, nil
}

// read returns the route, typed, and its record; nil route when it is gone.
func (r *Router) read(ctx context.Context) (*unstructured.Unstructured, *gatewayv1.HTTPRoute, *handback.Record, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(HTTPRouteKind)
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.t.Namespace, Name: r.name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil, nil
		}
		return nil, nil, nil, fmt.Errorf("reading HTTPRoute %s: %w", r.name, err)
	}
	route := &gatewayv1.HTTPRoute{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, route); err != nil {
		return nil, nil, nil, fmt.Errorf("reading HTTPRoute %s: %w", r.name, err)
	}
	rec, err := handback.Read(route.Annotations, RecordAnnotation)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("HTTPRoute %s: %w", r.name, err)
	}
	return u, route, rec, nil
}

// EnsureRoutes implements traffic.Provider.
func (r *Router) EnsureRoutes(ctx context.Context, d traffic.Desired) (bool, error) {
	_, route, rec, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	if route == nil {
		return false, fmt.Errorf("HTTPRoute %s not found", r.name)
	}
	original := route.Spec.Rules
	if rec != nil {
		if rec.Rollout != r.t.Rollout {
			return false, fmt.Errorf("HTTPRoute %s is being changed by Rollout %s: %w", r.name, rec.Rollout, traffic.ErrConflict)
		}
		if original, err = r.base(route, rec); err != nil {
			return false, err
		}
	}
	want, err := Rules(original, r.t.Namespace, d)
	if err != nil {
		return false, fmt.Errorf("HTTPRoute %s: %w", r.name, err)
	}
	if rec != nil && apiequality.Semantic.DeepEqual(normalized(route.Spec.Rules), want) {
		return true, nil
	}
	if rec == nil {
		if rec, err = handback.New(r.t.Rollout, original, route.ManagedFields, "spec", "rules"); err != nil {
			return false, err
		}
	} else if rec.Value, err = json.Marshal(original); err != nil {
		return false, err
	}
	if err := rec.SetApplied(want); err != nil {
		return false, err
	}
	rules, err := toJSONList(want)
	if err != nil {
		return false, err
	}
	// The write changes the rules unless they already are what is wanted
	// (a first write that only records): the route's generation then
	// moves on by one, and the recovery patch is for that generation.
	generation := route.Generation
	if !apiequality.Semantic.DeepEqual(normalized(route.Spec.Rules), want) {
		generation++
	}
	var originalRules any
	if original != nil {
		if originalRules, err = toJSONList(original); err != nil {
			return false, err
		}
	}
	recovery, err := handback.RecoveryPatch(generation, originalRules, "/spec/rules", RecordAnnotation)
	if err != nil {
		return false, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name": r.name, "namespace": r.t.Namespace,
			// As read: a route changed since fails the apply with a
			// conflict, so the generation above is the one it gets.
			"resourceVersion": route.ResourceVersion,
			"annotations":     map[string]any{RecordAnnotation: rec.Encode(), handback.RecoveryAnnotation: recovery},
		},
		"spec": map[string]any{"rules": rules},
	}}
	u.SetGroupVersionKind(HTTPRouteKind)
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(rolloutsv1beta1.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying HTTPRoute %s: %w", r.name, err)
	}
	return false, nil
}

// base is the route's live rules with sluice's change reverted (see
// handback.Record.Base), and any backendRef to the canary Service left in
// a rule someone edited taken out.
func (r *Router) base(route *gatewayv1.HTTPRoute, rec *handback.Record) ([]gatewayv1.HTTPRouteRule, error) {
	v, err := rec.Base(normalized(route.Spec.Rules))
	if err != nil {
		return nil, fmt.Errorf("annotation %s of HTTPRoute %s: %w", RecordAnnotation, r.name, err)
	}
	var rules []gatewayv1.HTTPRouteRule
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &rules)
	}
	if err != nil {
		return nil, fmt.Errorf("annotation %s of HTTPRoute %s: %w", RecordAnnotation, r.name, err)
	}
	return withoutCanary(rules, r.t.Namespace, r.t.Ref.Service, traffic.CanaryServiceOf(r.t)), nil
}

// Finalize implements traffic.Provider: it writes the rules without
// sluice's change back under the field manager that owned them, if the
// route is still as read, and drops the record.
func (r *Router) Finalize(ctx context.Context) (bool, error) {
	u, route, rec, err := r.read(ctx)
	if err != nil || route == nil || rec == nil || rec.Rollout != r.t.Rollout {
		return err == nil, err
	}
	rules, err := r.base(route, rec)
	if err != nil {
		return false, err
	}
	var value any
	if rules != nil {
		if value, err = toJSONList(rules); err != nil {
			return false, err
		}
	}
	patch, err := handback.RestorePatch(value, route.ResourceVersion, "/spec/rules", handback.Present(route.Annotations, RecordAnnotation, handback.RecoveryAnnotation)...)
	if err != nil {
		return false, err
	}
	if err := r.client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(rec.Owner())); err != nil {
		return false, fmt.Errorf("restoring the rules of HTTPRoute %s: %w", r.name, err)
	}
	return false, nil
}

// toJSONList turns v into the []any of its JSON form.
func toJSONList(v any) ([]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out []any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
