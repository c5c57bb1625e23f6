package helm

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sluice-dev/sluice/traffic/providers"
)

// TestChart_rbac_grantsEveryTrafficKind checks the chart against the
// table of traffic kinds: its ClusterRole grants every rule a kind
// declares, and its Roles in the release namespace every rule a kind
// needs there (the ConfigMap of Lua scripts).
func TestChart_rbac_grantsEveryTrafficKind(t *testing.T) {
	const ns = "sluice-system"
	r := render(t, ns)
	var cluster rbacv1.ClusterRole
	r.get(t, "ClusterRole", "sluice", &cluster)
	var local []rbacv1.PolicyRule
	for _, o := range r {
		if o.GetKind() != "Role" || o.GetNamespace() != ns {
			continue
		}
		var role rbacv1.Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatalf("Role %s: %v", o.GetName(), err)
		}
		local = append(local, role.Rules...)
	}
	for _, c := range []struct {
		what       string
		have, want []rbacv1.PolicyRule
	}{
		{"the ClusterRole", cluster.Rules, providers.RBAC()},
		{"the Roles in " + ns, local, providers.NamespaceRBAC()},
	} {
		for _, w := range c.want {
			if !grants(c.have, w) {
				t.Errorf("%s of the chart does not grant %+v, which traffic/providers declares", c.what, w)
			}
		}
	}
}

// grants reports whether have grants every verb of want on every resource
// of want (and on each of its resourceNames, or on all objects when it
// names none).
func grants(have []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	for _, g := range want.APIGroups {
		for _, res := range want.Resources {
			for _, v := range want.Verbs {
				if !slices.ContainsFunc(have, func(h rbacv1.PolicyRule) bool {
					return slices.Contains(h.APIGroups, g) && slices.Contains(h.Resources, res) && slices.Contains(h.Verbs, v) &&
						(len(h.ResourceNames) == 0 || len(want.ResourceNames) > 0 && !slices.ContainsFunc(want.ResourceNames, func(n string) bool {
							return !slices.Contains(h.ResourceNames, n)
						}))
				}) {
					return false
				}
			}
		}
	}
	return true
}
