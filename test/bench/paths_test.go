package main

import (
	"net/http"
	"net/url"
	"testing"
)

func TestSplitAPIPath_stripsGroupsNamespacesAndNames(t *testing.T) {
	tests := []struct {
		name                                  string
		path                                  string
		resource, namespace, obj, subresource string
	}{
		{name: "namespaced object", path: "/apis/apps/v1/namespaces/ns/deployments/web",
			resource: "deployments", namespace: "ns", obj: "web"},
		{name: "namespaced collection", path: "/apis/apps/v1/namespaces/ns/replicasets",
			resource: "replicasets", namespace: "ns"},
		{name: "status subresource", path: "/apis/rollouts.kruise.io/v1beta1/namespaces/ns/rollouts/web/status",
			resource: "rollouts", namespace: "ns", obj: "web", subresource: "status"},
		{name: "core group", path: "/api/v1/namespaces/ns/events",
			resource: "events", namespace: "ns"},
		{name: "cluster-scoped collection", path: "/apis/apps/v1/deployments", resource: "deployments"},
		{name: "cluster-scoped object", path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/sluice",
			resource: "mutatingwebhookconfigurations", obj: "sluice"},
		{name: "namespace object", path: "/api/v1/namespaces/ns", resource: "namespaces", obj: "ns"},
		{name: "namespace collection", path: "/api/v1/namespaces", resource: "namespaces"},
		{name: "namespace status", path: "/api/v1/namespaces/ns/status", resource: "namespaces", obj: "ns", subresource: "status"},
		{name: "namespace finalize", path: "/api/v1/namespaces/ns/finalize", resource: "namespaces", obj: "ns", subresource: "finalize"},
		{name: "trailing slash", path: "/api/v1/namespaces/ns/pods/", resource: "pods", namespace: "ns"},
		{name: "discovery of a group", path: "/apis/apps/v1"},
		{name: "core discovery", path: "/api/v1"},
		{name: "health", path: "/healthz"},
		{name: "root", path: "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ns, obj, sub := splitAPIPath(tt.path)
			if r != tt.resource || ns != tt.namespace || obj != tt.obj || sub != tt.subresource {
				t.Errorf("splitAPIPath(%q) = %q %q %q %q, want %q %q %q %q", tt.path, r, ns, obj, sub,
					tt.resource, tt.namespace, tt.obj, tt.subresource)
			}
		})
	}
}

func TestResourceOf_groupsPathsByResource(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{name: "object", path: "/apis/apps/v1/namespaces/a/deployments/web", want: "deployments"},
		{name: "same resource elsewhere", path: "/apis/apps/v1/namespaces/b/deployments/api", want: "deployments"},
		{name: "subresource", path: "/apis/rollouts.kruise.io/v1beta1/namespaces/a/rollouts/web/status", want: "rollouts/status"},
		{name: "events API", path: "/apis/events.k8s.io/v1/namespaces/a/events", want: "events"},
		{name: "not a resource path", path: "/version", want: "/version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resourceOf(tt.path); got != tt.want {
				t.Errorf("resourceOf(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestVerbOf_tellsGetListAndWatchApart(t *testing.T) {
	tests := []struct {
		name, method, rawURL, want string
	}{
		{name: "get object", method: http.MethodGet, rawURL: "/apis/apps/v1/namespaces/a/deployments/web", want: "GET"},
		{name: "list", method: http.MethodGet, rawURL: "/apis/apps/v1/namespaces/a/replicasets?labelSelector=app%3Dweb", want: "LIST"},
		{name: "watch", method: http.MethodGet, rawURL: "/apis/apps/v1/deployments?watch=true&resourceVersion=5", want: "WATCH"},
		{name: "discovery is a get", method: http.MethodGet, rawURL: "/apis/apps/v1", want: "GET"},
		{name: "patch", method: http.MethodPatch, rawURL: "/apis/apps/v1/namespaces/a/deployments/web", want: "PATCH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.rawURL)
			if err != nil {
				t.Fatal(err)
			}
			if got := verbOf(&http.Request{Method: tt.method, URL: u}); got != tt.want {
				t.Errorf("verbOf(%s %s) = %q, want %q", tt.method, tt.rawURL, got, tt.want)
			}
		})
	}
}

func TestEmptyPatch_onlyBodiesThatChangeNothing(t *testing.T) {
	tests := []struct {
		name, body string
		want       bool
	}{
		{name: "empty object", body: `{}`, want: true},
		{name: "empty spec", body: `{"spec":{}}`, want: true},
		{name: "nested empties", body: `{"metadata":{"annotations":{},"labels":{}},"spec":{}}`, want: true},
		{name: "empty JSON patch", body: `[]`, want: true},
		{name: "a value", body: `{"spec":{"paused":true}}`, want: false},
		{name: "a null removes a field", body: `{"metadata":{"annotations":{"a":null}}}`, want: false},
		{name: "an empty list replaces a list", body: `{"metadata":{"finalizers":[]}}`, want: false},
		{name: "a JSON patch operation", body: `[{"op":"remove","path":"/spec/paused"}]`, want: false},
		{name: "not JSON", body: `spec: {}`, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := emptyPatch([]byte(tt.body)); got != tt.want {
				t.Errorf("emptyPatch(%s) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}
