package gateway

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

// Limits of an HTTPRoute, from the Gateway API schema.
const (
	maxRules         = 16
	maxMatchesOfRule = 64
	maxMatches       = 128
	maxBackendRefs   = 16
	maxWeight        = 1000000
)

// Rules builds the rules an HTTPRoute carries for d, from the route's
// rules before the release (original), in namespace. Every rule with a
// backendRef to the stable Service is kept; then
//   - with matches, a copy of the rule goes before it, sending the requests
//     that match both the rule and one of d's matches to the canary Service
//     (with d's request header modifier added to the rule's filters);
//   - with a weight, the rule sends that share to the canary Service: a
//     backendRef to it is added beside the stable one, and the stable
//     one's weight is split between them (other backends keep their share).
//
// Rules without the stable Service are left as they are. What Rules adds
// carries every field the API server would default, so that a route read
// back compares equal.
func Rules(original []gatewayv1.HTTPRouteRule, namespace string, d traffic.Desired) ([]gatewayv1.HTTPRouteRule, error) {
	var out []gatewayv1.HTTPRouteRule
	found := false
	for _, rule := range original {
		rule = *rule.DeepCopy()
		normalizeRule(&rule)
		i := stableRef(rule.BackendRefs, namespace, d.StableService)
		if i < 0 {
			out = append(out, rule)
			continue
		}
		found = true
		if len(d.Matches) > 0 {
			c, err := matchRule(rule, i, d)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if d.Weight != nil {
			if err := weigh(&rule, i, *d.Weight, d); err != nil {
				return nil, err
			}
		}
		out = append(out, rule)
	}
	if !found {
		return nil, fmt.Errorf("no rule has a backendRef to Service %s", d.StableService)
	}
	if len(out) > maxRules {
		return nil, fmt.Errorf("the route would need %d rules, more than the %d an HTTPRoute may have", len(out), maxRules)
	}
	n := 0
	for _, r := range out {
		n += len(r.Matches)
	}
	if n > maxMatches {
		return nil, fmt.Errorf("the route would need %d matches, more than the %d an HTTPRoute may have", n, maxMatches)
	}
	return out, nil
}

// stableRef is the index of the backendRef to Service name in namespace,
// or -1. A backendRef without kind or group refers to a Service.
func stableRef(refs []gatewayv1.HTTPBackendRef, namespace, name string) int {
	for i, r := range refs {
		if string(r.Name) != name || ptr.Deref(r.Kind, "Service") != "Service" || ptr.Deref(r.Group, "") != "" {
			continue
		}
		if r.Namespace != nil && string(*r.Namespace) != namespace {
			continue
		}
		return i
	}
	return -1
}

// matchRule is the copy of rule that sends the requests matching both the
// rule and one of d's matches to the canary Service.
func matchRule(rule gatewayv1.HTTPRouteRule, i int, d traffic.Desired) (gatewayv1.HTTPRouteRule, error) {
	c := *rule.DeepCopy()
	if c.Name != nil {
		c.Name = ptr.To(*c.Name + "-canary")
	}
	ref := *rule.BackendRefs[i].DeepCopy()
	ref.Name = gatewayv1.ObjectName(d.CanaryService)
	ref.Weight = ptr.To[int32](1)
	c.BackendRefs = []gatewayv1.HTTPBackendRef{ref}
	c.Matches = nil
	for _, m := range rule.Matches {
		for j, n := range d.Matches {
			merged, err := mergeMatch(m, n)
			if err != nil {
				return c, fmt.Errorf("matches[%d]: %w", j, err)
			}
			c.Matches = append(c.Matches, merged)
		}
	}
	if len(c.Matches) > maxMatchesOfRule {
		return c, fmt.Errorf("a rule would need %d matches, more than the %d a rule may have", len(c.Matches), maxMatchesOfRule)
	}
	c.Filters = withHeaderModifier(c.Filters, d.RequestHeaderModifier)
	return c, nil
}

// weigh sends weight percent of rule's requests for the stable backendRef
// i to the canary Service, through a backendRef beside it.
func weigh(rule *gatewayv1.HTTPRouteRule, i int, weight int32, d traffic.Desired) error {
	if len(rule.BackendRefs) >= maxBackendRefs {
		return fmt.Errorf("a rule already has %d backendRefs; the canary one would exceed the limit", len(rule.BackendRefs))
	}
	base := ptr.Deref(rule.BackendRefs[i].Weight, 1)
	scale := int32(1)
	if len(rule.BackendRefs) > 1 {
		// Keep the other backends' share: scale every weight by 100 and
		// split the stable one's.
		scale = 100
	} else {
		base = 100
	}
	refs := make([]gatewayv1.HTTPBackendRef, 0, len(rule.BackendRefs)+1)
	for j, r := range rule.BackendRefs {
		r = *r.DeepCopy()
		if j != i {
			w := int64(ptr.Deref(r.Weight, 1)) * int64(scale)
			if w > maxWeight {
				return errors.New("the weights of the rule's other backends are too large to split")
			}
			r.Weight = ptr.To(int32(w)) //nolint:gosec // bounded by maxWeight
			refs = append(refs, r)
			continue
		}
		canary := *r.DeepCopy()
		canary.Name = gatewayv1.ObjectName(d.CanaryService)
		canary.Filters = withHeaderModifier(canary.Filters, d.RequestHeaderModifier)
		stableW := int64(base) * int64(100-weight) * int64(scale) / 100
		canaryW := int64(base) * int64(weight) * int64(scale) / 100
		if stableW > maxWeight || canaryW > maxWeight {
			return errors.New("the stable backend's weight is too large to split")
		}
		r.Weight = ptr.To(int32(stableW))      //nolint:gosec // bounded by maxWeight
		canary.Weight = ptr.To(int32(canaryW)) //nolint:gosec // bounded by maxWeight
		refs = append(refs, r, canary)
	}
	rule.BackendRefs = refs
	return nil
}

// mergeMatch is m narrowed by n: n's path replaces m's, n's headers and
// query parameters are added to m's. A header or parameter both name with
// different conditions can never match both, so it is an error.
func mergeMatch(m gatewayv1.HTTPRouteMatch, n rolloutsv1beta1.HttpRouteMatch) (gatewayv1.HTTPRouteMatch, error) {
	out := *m.DeepCopy()
	if n.Path != nil {
		out.Path = &gatewayv1.HTTPPathMatch{
			Type:  ptr.To(gatewayv1.PathMatchType(ptr.Deref(n.Path.Type, rolloutsv1beta1.MatchPathPrefix))),
			Value: ptr.To(ptr.Deref(n.Path.Value, "/")),
		}
	}
	for _, h := range n.Headers {
		add := gatewayv1.HTTPHeaderMatch{
			Type:  ptr.To(gatewayv1.HeaderMatchType(ptr.Deref(h.Type, rolloutsv1beta1.MatchExact))),
			Name:  gatewayv1.HTTPHeaderName(h.Name),
			Value: h.Value,
		}
		dup := false
		for _, e := range out.Headers {
			if strings.EqualFold(string(e.Name), h.Name) {
				if *e.Type != *add.Type || e.Value != add.Value {
					return out, fmt.Errorf("header %s is already matched by the route's rule with another value", h.Name)
				}
				dup = true
			}
		}
		if !dup {
			out.Headers = append(out.Headers, add)
		}
	}
	for _, q := range n.QueryParams {
		add := gatewayv1.HTTPQueryParamMatch{
			Type:  ptr.To(gatewayv1.QueryParamMatchType(ptr.Deref(q.Type, rolloutsv1beta1.MatchExact))),
			Name:  gatewayv1.HTTPHeaderName(q.Name),
			Value: q.Value,
		}
		dup := false
		for _, e := range out.QueryParams {
			if string(e.Name) == q.Name {
				if *e.Type != *add.Type || e.Value != add.Value {
					return out, fmt.Errorf("query parameter %s is already matched by the route's rule with another value", q.Name)
				}
				dup = true
			}
		}
		if !dup {
			out.QueryParams = append(out.QueryParams, add)
		}
	}
	return out, nil
}

// withHeaderModifier adds m to the RequestHeaderModifier filter of
// filters (creating it when there is none; the API allows one).
func withHeaderModifier(filters []gatewayv1.HTTPRouteFilter, m *rolloutsv1beta1.HTTPHeaderFilter) []gatewayv1.HTTPRouteFilter {
	if m == nil {
		return filters
	}
	i := -1
	for j, f := range filters {
		if f.Type == gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil {
			i = j
		}
	}
	if i < 0 {
		filters = append(filters, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{}})
		i = len(filters) - 1
	}
	f := filters[i].RequestHeaderModifier
	f.Set = setHeaders(f.Set, m.Set)
	f.Add = setHeaders(f.Add, m.Add)
	for _, r := range m.Remove {
		if !containsFold(f.Remove, r) {
			f.Remove = append(f.Remove, r)
		}
	}
	return filters
}

// setHeaders returns hs with each of add set (replacing one of the same
// name).
func setHeaders(hs []gatewayv1.HTTPHeader, add []rolloutsv1beta1.HTTPHeader) []gatewayv1.HTTPHeader {
	for _, a := range add {
		replaced := false
		for i := range hs {
			if strings.EqualFold(string(hs[i].Name), a.Name) {
				hs[i].Value, replaced = a.Value, true
			}
		}
		if !replaced {
			hs = append(hs, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(a.Name), Value: a.Value})
		}
	}
	return hs
}

// normalizeRule fills in what the API server defaults in a rule, so that
// rules built from it compare equal to what is read back.
func normalizeRule(r *gatewayv1.HTTPRouteRule) {
	if len(r.Matches) == 0 {
		r.Matches = []gatewayv1.HTTPRouteMatch{{}}
	}
	for i := range r.Matches {
		m := &r.Matches[i]
		if m.Path == nil {
			m.Path = &gatewayv1.HTTPPathMatch{}
		}
		if m.Path.Type == nil {
			m.Path.Type = ptr.To(gatewayv1.PathMatchPathPrefix)
		}
		if m.Path.Value == nil {
			m.Path.Value = ptr.To("/")
		}
		for j := range m.Headers {
			if m.Headers[j].Type == nil {
				m.Headers[j].Type = ptr.To(gatewayv1.HeaderMatchExact)
			}
		}
		for j := range m.QueryParams {
			if m.QueryParams[j].Type == nil {
				m.QueryParams[j].Type = ptr.To(gatewayv1.QueryParamMatchExact)
			}
		}
	}
	for i := range r.BackendRefs {
		b := &r.BackendRefs[i]
		if b.Group == nil {
			b.Group = ptr.To(gatewayv1.Group(""))
		}
		if b.Kind == nil {
			b.Kind = ptr.To(gatewayv1.Kind("Service"))
		}
		if b.Weight == nil {
			b.Weight = ptr.To[int32](1)
		}
	}
}

// normalized returns rules with the API server's defaults filled in.
func normalized(rules []gatewayv1.HTTPRouteRule) []gatewayv1.HTTPRouteRule {
	out := make([]gatewayv1.HTTPRouteRule, len(rules))
	for i := range rules {
		out[i] = *rules[i].DeepCopy()
		normalizeRule(&out[i])
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Check returns why an HTTPRoute cannot express the traffic s; nil when it
// can. Everything can be expressed but a cookie: the Gateway API has no
// cookie match, and a match on a header named canary-by-cookie (the way
// Ingress classes take a cookie) would match a header of that name.
func Check(s rolloutsv1beta1.TrafficRoutingStrategy) error {
	for i, m := range s.Matches {
		for _, h := range m.Headers {
			if strings.EqualFold(h.Name, "canary-by-cookie") {
				return fmt.Errorf("matches[%d]: the Gateway API cannot match a cookie by name; match the Cookie header with a RegularExpression instead", i)
			}
		}
	}
	return nil
}

// withoutCanary takes out of rules what routes to the canary Service
// (when it is not the stable Service itself): a backendRef to it gives
// its weight back to the stable backendRef of its rule, and a rule left
// with no backendRef is dropped. Restores revert sluice's own change
// exactly; this only cleans a rule someone edited while it carried
// sluice's change, so that no request goes to the canary Service after
// it is removed.
func withoutCanary(rules []gatewayv1.HTTPRouteRule, namespace, stable, canary string) []gatewayv1.HTTPRouteRule {
	if canary == stable {
		return rules
	}
	out := rules[:0:0]
	for _, rule := range rules {
		c := stableRef(rule.BackendRefs, namespace, canary)
		if c < 0 {
			out = append(out, rule)
			continue
		}
		rule = *rule.DeepCopy()
		var refs []gatewayv1.HTTPBackendRef
		var moved int32
		for j, ref := range rule.BackendRefs {
			if j == c || stableRef([]gatewayv1.HTTPBackendRef{ref}, namespace, canary) == 0 {
				moved += ptr.Deref(ref.Weight, 1)
				continue
			}
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			continue
		}
		if s := stableRef(refs, namespace, stable); s >= 0 && refs[s].Weight != nil {
			refs[s].Weight = ptr.To(min(*refs[s].Weight+moved, maxWeight))
		}
		rule.BackendRefs = refs
		out = append(out, rule)
	}
	return out
}
