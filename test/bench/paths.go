package main

import (
	"encoding/json"
	"net/http"
	"strings"
)

// isWrite reports whether verb changes state on the API server.
func isWrite(verb string) bool {
	switch verb {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// verbOf is the request's HTTP method, except that GETs are told apart as
// LIST (a collection), WATCH and GET (one object, or a non-resource path).
func verbOf(req *http.Request) string {
	if req.Method != http.MethodGet {
		return req.Method
	}
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		return "WATCH"
	}
	if resource, _, name, _ := splitAPIPath(req.URL.Path); resource != "" && name == "" {
		return "LIST"
	}
	return http.MethodGet
}

// resourceOf groups an API path by resource: "/apis/apps/v1/namespaces/ns/
// deployments/web" and "/apis/apps/v1/deployments" are both "deployments",
// ".../rollouts/web/status" is "rollouts/status". Paths outside /api and
// /apis are returned as they are.
func resourceOf(path string) string {
	resource, _, _, sub := splitAPIPath(path)
	switch {
	case resource == "":
		return path
	case sub != "":
		return resource + "/" + sub
	}
	return resource
}

// namespaceOf returns the namespace an API path is scoped to, or "".
func namespaceOf(path string) string {
	_, ns, _, _ := splitAPIPath(path)
	return ns
}

// splitAPIPath takes an API path apart into its resource, namespace, name
// and subresource. The resource is empty for paths that are not resource
// paths (discovery, /healthz, ...).
func splitAPIPath(path string) (resource, namespace, name, subresource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api/v1
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:] // apis/group/version
	default:
		return "", "", "", ""
	}
	if parts[0] == "namespaces" && len(parts) >= 3 && !isNamespaceSubresource(parts) {
		namespace, parts = parts[1], parts[2:]
	}
	resource = parts[0]
	if len(parts) >= 2 {
		name = parts[1]
	}
	if len(parts) >= 3 {
		subresource = strings.Join(parts[2:], "/")
	}
	return resource, namespace, name, subresource
}

// isNamespaceSubresource reports whether parts, starting with "namespaces",
// names a subresource of a Namespace itself rather than a resource in it.
func isNamespaceSubresource(parts []string) bool {
	return len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize")
}

// emptyPatch reports whether a patch body changes nothing: a JSON object
// whose values are all, recursively, empty objects ({}, {"spec":{}}), or an
// empty JSON patch ([]). An empty list inside an object is not empty: a
// merge patch replaces the list with it.
func emptyPatch(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return false
	}
	if ops, ok := v.([]any); ok {
		return len(ops) == 0
	}
	var empty func(any) bool
	empty = func(v any) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if !empty(e) {
				return false
			}
		}
		return true
	}
	return empty(v)
}
