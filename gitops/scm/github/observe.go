package github

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// observeTransport tells an scm.Observer about every request that reaches
// the network: the operation, its outcome and the rate-limit budget left.
type observeTransport struct {
	next     http.RoundTripper
	observer scm.Observer
}

// RoundTrip implements http.RoundTripper.
func (t *observeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	op := req.Method + " " + route(req.URL.Path)
	if err != nil {
		t.observer.Request(op, "error")
		return resp, err
	}
	t.observer.Request(op, strconv.Itoa(resp.StatusCode))
	if v := resp.Header.Get("X-RateLimit-Remaining"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			t.observer.RateLimit(n)
		}
	}
	return resp, nil
}

// route turns a REST path into its route, so that metrics have a bounded
// set of operations: the API prefix of GitHub Enterprise goes, the owner
// and repository of /repos/{owner}/{repo}/... go, and numbers, commit SHAs
// and the names after users/teams/labels/refs become placeholders.
func route(path string) string {
	path = strings.TrimPrefix(path, "/api/v3")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	out := make([]string, 0, len(parts))
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		switch {
		case i == 0 && p == "repos" && len(parts) >= 3:
			out = append(out, "repos")
			i += 2 // owner and repo
		case isNumber(p):
			out = append(out, "{n}")
		case commitid.Valid(p):
			out = append(out, "{sha}")
		case i > 0 && named(parts[i-1]):
			out = append(out, "{name}")
		default:
			out = append(out, p)
		}
	}
	return "/" + strings.Join(out, "/")
}

// named reports whether the segment after seg is a name, not a route word.
func named(seg string) bool {
	switch seg {
	case "collaborators", "memberships", "teams", "orgs", "labels", "heads", "users":
		return true
	}
	return false
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
