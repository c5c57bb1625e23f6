package ingress

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

// CookieHeader is the header name that, in a match, stands for a cookie (as
// OpenKruise Rollouts documents): the match's value names the cookie, and a
// request whose cookie of that name is "always" goes to the new revision.
const CookieHeader = "canary-by-cookie"

// The built-in Ingress classes.
const (
	ClassNginx     = "nginx"
	ClassHigress   = "higress"
	ClassMSE       = "mse"
	ClassAliyunALB = "aliyun-alb"
)

// class describes what one Ingress implementation's canary annotations
// can express.
type class struct {
	// prefix of the canary annotations.
	prefix string
	// headerPattern: a header can be matched by regular expression.
	headerPattern bool
	// query: one query parameter can be matched exactly (MSE).
	query bool
	// exclusive: a header or cookie match cannot be combined with a weight,
	// and only one match applies (ALB).
	exclusive bool
	// headerControl is the prefix of the request-header-control
	// annotations that modify the canary's requests; empty when the class
	// has none.
	headerControl string
	// extra annotations every canary Ingress of the class carries.
	extra map[string]string
}

var classes = map[string]class{
	ClassNginx:     {prefix: "nginx.ingress.kubernetes.io/", headerPattern: true},
	ClassHigress:   {prefix: "nginx.ingress.kubernetes.io/", headerPattern: true, headerControl: "higress.io/"},
	ClassMSE:       {prefix: "nginx.ingress.kubernetes.io/", query: true, headerControl: "mse.ingress.kubernetes.io/"},
	ClassAliyunALB: {prefix: "alb.ingress.kubernetes.io/", exclusive: true, extra: map[string]string{"alb.ingress.kubernetes.io/order": "1"}},
}

// Classes lists the built-in classes, for messages.
func Classes() []string {
	out := make([]string, 0, len(classes))
	for c := range classes {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// lookup returns the class named name ("" is nginx).
func lookup(name string) (class, error) {
	if name == "" {
		name = ClassNginx
	}
	c, ok := classes[name]
	if !ok {
		return class{}, fmt.Errorf("ingress classType %q is not built in (built in: %s); classes scripted in Lua are not supported yet: %w",
			name, strings.Join(Classes(), ", "), traffic.ErrUnsupported)
	}
	return c, nil
}

// Supported reports whether the class named name is built in.
func Supported(name string) bool {
	_, err := lookup(name)
	return err == nil
}

// plan is a step's traffic in the terms of canary annotations.
type plan struct {
	header, headerValue, headerPattern string
	cookie                             string
	query, queryValue                  string
}

// planOf maps matches onto the annotations of c, or says why they cannot
// be: each match must be a single condition, and at most one header (or
// query parameter, for MSE) match and one cookie match may be given, since
// a canary Ingress has one annotation of each.
func planOf(c class, matches []rolloutsv1beta1.HttpRouteMatch) (plan, error) {
	var p plan
	for i, m := range matches {
		at := fmt.Sprintf("matches[%d]", i)
		if m.Path != nil {
			return p, fmt.Errorf("%s: a canary Ingress cannot match the path; use a Gateway API HTTPRoute", at)
		}
		if n := len(m.Headers) + len(m.QueryParams); n != 1 {
			return p, fmt.Errorf("%s: a canary Ingress matches one header, cookie or query parameter per match, not %d (the conditions of one match are ANDed, which canary annotations cannot express)", at, n)
		}
		if len(m.QueryParams) == 1 {
			q := m.QueryParams[0]
			switch {
			case !c.query:
				return p, fmt.Errorf("%s: this Ingress class cannot match query parameters (only mse can)", at)
			case q.Type != nil && *q.Type != rolloutsv1beta1.MatchExact:
				return p, fmt.Errorf("%s: query parameters match exactly only, not by %s", at, *q.Type)
			case p.query != "" || p.header != "":
				return p, errors.New(at + ": only one header or query parameter match can be expressed")
			}
			p.query, p.queryValue = q.Name, q.Value
			continue
		}
		h := m.Headers[0]
		regex := h.Type != nil && *h.Type == rolloutsv1beta1.MatchRegularExpression
		if strings.EqualFold(h.Name, CookieHeader) {
			if regex || p.cookie != "" {
				return p, errors.New(at + ": only one cookie, matched by its name, can be expressed")
			}
			p.cookie = h.Value
			continue
		}
		switch {
		case p.header != "" || p.query != "":
			return p, fmt.Errorf("%s: only one header match can be expressed (header %s already matched)", at, p.header+p.query)
		case regex && !c.headerPattern:
			return p, fmt.Errorf("%s: this Ingress class matches headers exactly only, not by regular expression", at)
		case regex:
			p.header, p.headerPattern = h.Name, h.Value
		default:
			p.header, p.headerValue = h.Name, h.Value
		}
	}
	if c.exclusive && len(matches) > 1 {
		return p, errors.New("matches: this Ingress class applies one header or cookie rule per canary Ingress, not several")
	}
	return p, nil
}

// Check returns why the Ingress class named name cannot express the
// traffic s (matches and weight) on a canary Ingress; nil when it can. A
// requestHeaderModifier it cannot apply is reported by Ignores instead.
func Check(name string, s rolloutsv1beta1.TrafficRoutingStrategy) error {
	c, err := lookup(name)
	if err != nil {
		return err
	}
	if _, err := planOf(c, s.Matches); err != nil {
		return err
	}
	if c.exclusive && len(s.Matches) > 0 && s.Traffic != nil && *s.Traffic != "0%" {
		return errors.New("this Ingress class cannot combine a header or cookie match with a traffic weight on one canary Ingress; give them in separate steps")
	}
	return nil
}

// Ignores says what of s the Ingress class named name cannot apply and
// leaves without effect (a request header modifier), or "".
func Ignores(name string, s rolloutsv1beta1.TrafficRoutingStrategy) string {
	c, err := lookup(name)
	if err != nil || s.RequestHeaderModifier == nil || c.headerControl != "" {
		return ""
	}
	return "requestHeaderModifier: this Ingress class cannot modify request headers"
}

// Annotations returns the canary annotations of the Ingress class named
// name for d: the canary mark, the weight, the header, cookie or query
// match, the request header changes where the class supports them, and the
// class's own extras.
func Annotations(name string, d traffic.Desired) (map[string]string, error) {
	c, err := lookup(name)
	if err != nil {
		return nil, err
	}
	p, err := planOf(c, d.Matches)
	if err != nil {
		return nil, err
	}
	weighted := d.Weight != nil && (*d.Weight > 0 || len(d.Matches) == 0)
	if c.exclusive && len(d.Matches) > 0 && weighted {
		return nil, errors.New("this Ingress class cannot combine a header or cookie match with a traffic weight")
	}
	a := map[string]string{c.prefix + "canary": "true"}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	if weighted {
		a[c.prefix+"canary-weight"] = fmt.Sprint(*d.Weight)
	}
	set(c.prefix+"canary-by-header", p.header)
	set(c.prefix+"canary-by-header-value", p.headerValue)
	set(c.prefix+"canary-by-header-pattern", p.headerPattern)
	set(c.prefix+"canary-by-cookie", p.cookie)
	set("mse.ingress.kubernetes.io/canary-by-query", p.query)
	set("mse.ingress.kubernetes.io/canary-by-query-value", p.queryValue)
	for k, v := range c.extra {
		a[k] = v
	}
	if m := d.RequestHeaderModifier; m != nil && c.headerControl != "" {
		set(c.headerControl+"request-header-control-add", headerLines(m.Add))
		set(c.headerControl+"request-header-control-update", headerLines(m.Set))
		set(c.headerControl+"request-header-control-remove", strings.Join(m.Remove, ","))
	}
	return a, nil
}

// headerLines renders headers the way the request-header-control
// annotations of Higress and MSE take them: one "name value" per line.
func headerLines(hs []rolloutsv1beta1.HTTPHeader) string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.Name+" "+h.Value)
	}
	return strings.Join(out, "\n")
}
