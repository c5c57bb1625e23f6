package helm

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// call is one API request, as RBAC sees it.
type call struct {
	Verb, Group, Resource, Namespace, Name string
}

func (c call) String() string {
	return fmt.Sprintf("%s %s/%s ns=%q name=%q", c.Verb, c.Group, c.Resource, c.Namespace, c.Name)
}

// callOf returns the RBAC view of a request to path with method and query;
// ok is false for non-resource paths (discovery, /version, OpenAPI), which
// every authenticated client may read.
func callOf(method, path string, query url.Values) (c call, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		c.Group, parts = parts[1], parts[3:]
	default:
		return call{}, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		c.Namespace, parts = parts[1], parts[2:]
	}
	c.Resource = parts[0]
	if len(parts) > 1 {
		c.Name = parts[1]
	}
	if len(parts) > 2 {
		c.Resource += "/" + parts[2]
	}
	switch method {
	case http.MethodGet:
		switch {
		case query.Get("watch") == "true" || query.Get("watch") == "1":
			c.Verb = "watch"
		case c.Name == "":
			c.Verb = "list"
		default:
			c.Verb = "get"
		}
	case http.MethodPost:
		c.Verb = "create"
	case http.MethodPut:
		c.Verb = "update"
	case http.MethodPatch:
		c.Verb = "patch"
	case http.MethodDelete:
		c.Verb = "delete"
		if c.Name == "" {
			c.Verb = "deletecollection"
		}
	default:
		return call{}, false
	}
	return c, true
}

func TestCallOf(t *testing.T) {
	tests := []struct {
		name, method, path, query string
		want                      call
		wantOK                    bool
	}{
		{name: "core list", method: "GET", path: "/api/v1/pods", want: call{Verb: "list", Resource: "pods"}, wantOK: true},
		{name: "watch in namespace", method: "GET", path: "/apis/apps/v1/namespaces/a/deployments", query: "watch=true",
			want: call{Verb: "watch", Group: "apps", Resource: "deployments", Namespace: "a"}, wantOK: true},
		{name: "status patch", method: "PATCH", path: "/apis/rollouts.kruise.io/v1beta1/namespaces/a/rollouts/r/status",
			want: call{Verb: "patch", Group: "rollouts.kruise.io", Resource: "rollouts/status", Namespace: "a", Name: "r"}, wantOK: true},
		{name: "cluster-scoped get", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x",
			want: call{Verb: "get", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "x"}, wantOK: true},
		{name: "namespace itself", method: "GET", path: "/api/v1/namespaces/a", want: call{Verb: "get", Resource: "namespaces", Name: "a"}, wantOK: true},
		{name: "create", method: "POST", path: "/apis/events.k8s.io/v1/namespaces/a/events",
			want: call{Verb: "create", Group: "events.k8s.io", Resource: "events", Namespace: "a"}, wantOK: true},
		{name: "discovery", method: "GET", path: "/apis/apps/v1"},
		{name: "version", method: "GET", path: "/version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got, ok := callOf(tt.method, tt.path, q)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("callOf(%s %s) = %v, %v; want %v, %v", tt.method, tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// recorder records the calls of a client and the answers it got.
type recorder struct {
	mu        sync.Mutex
	calls     map[call]int
	forbidden []string
}

func newRecorder() *recorder { return &recorder{calls: map[call]int{}} }

// wrap is an app.Options.WrapTransport.
func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		c, ok := callOf(req.Method, req.URL.Path, req.URL.Query())
		if !ok {
			return resp, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls[c]++
		if err == nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized) {
			r.forbidden = append(r.forbidden, fmt.Sprintf("%s: %d", c, resp.StatusCode))
		}
		return resp, err
	})
}

// snapshot returns the calls so far and the forbidden ones.
func (r *recorder) snapshot() ([]call, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]call, 0, len(r.calls))
	for c := range r.calls {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, slices.Clone(r.forbidden)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// grant is a set of rules and where they apply: namespace "" for a
// ClusterRole bound cluster-wide, else a Role's namespace.
type grant struct {
	namespace string
	rules     []rbacv1.PolicyRule
}

// allows reports whether a rule of g allows c, as the RBAC authorizer
// decides (no wildcards are used by the chart, but they are honoured).
func (g grant) allows(c call) bool {
	if g.namespace != "" && c.Namespace != g.namespace {
		return false
	}
	for _, r := range g.rules {
		if matches(r.APIGroups, c.Group) && matches(r.Resources, c.Resource) && matches(r.Verbs, c.Verb) &&
			(len(r.ResourceNames) == 0 || (c.Name != "" && slices.Contains(r.ResourceNames, c.Name))) {
			return true
		}
	}
	return false
}

func matches(list []string, v string) bool {
	return slices.Contains(list, v) || slices.Contains(list, "*")
}

func TestGrantAllows(t *testing.T) {
	g := grant{rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"patch"},
			ResourceNames: []string{"rollouts.rollouts.kruise.io"}},
	}}
	ns := grant{namespace: "sys", rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}}}}
	tests := []struct {
		g    grant
		c    call
		want bool
	}{
		{g, call{Verb: "get", Group: "apps", Resource: "deployments", Namespace: "a", Name: "d"}, true},
		{g, call{Verb: "update", Group: "apps", Resource: "deployments", Namespace: "a", Name: "d"}, false},
		{g, call{Verb: "get", Group: "apps", Resource: "deployments/status", Namespace: "a", Name: "d"}, false},
		{g, call{Verb: "patch", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "rollouts.rollouts.kruise.io"}, true},
		{g, call{Verb: "patch", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "other"}, false},
		{ns, call{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "sys", Name: "l"}, true},
		{ns, call{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "other", Name: "l"}, false},
	}
	for _, tt := range tests {
		if got := tt.g.allows(tt.c); got != tt.want {
			t.Errorf("allows(%v) = %v, want %v", tt.c, got, tt.want)
		}
	}
}
