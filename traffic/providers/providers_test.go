package providers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic/lua"
)

func TestKeys(t *testing.T) {
	route := "web-route"
	got := Keys([]rolloutsv1beta1.TrafficRoutingRef{
		{Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}},
		{Service: "api", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &route}},
	})
	want := []string{"Service/web", "Service/web-canary", "Ingress/web", "Ingress/web-canary", "Service/api", "Service/api-canary", "HTTPRoute/web-route"}
	if !slices.Equal(got, want) {
		t.Errorf("Keys() = %v, want %v", got, want)
	}
}

func TestValidateRef(t *testing.T) {
	empty := ""
	path := field.NewPath("spec", "strategy", "canary", "trafficRoutings").Index(0)
	tests := []struct {
		name string
		ref  rolloutsv1beta1.TrafficRoutingRef
		want []string
	}{
		{name: "an Ingress", ref: rolloutsv1beta1.TrafficRoutingRef{Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}}},
		{name: "nothing named", want: []string{"spec.strategy.canary.trafficRoutings[0]: Required value: set one of customNetworkRefs, ingress and gateway"}},
		{name: "an Ingress without a name", ref: rolloutsv1beta1.TrafficRoutingRef{Ingress: &rolloutsv1beta1.IngressTrafficRouting{}},
			want: []string{"spec.strategy.canary.trafficRoutings[0].ingress.name: Required value"}},
		{name: "an Ingress class not driven", ref: rolloutsv1beta1.TrafficRoutingRef{Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web", ClassType: "traefik"}},
			want: []string{`spec.strategy.canary.trafficRoutings[0].ingress.classType: Invalid value: "traefik": not an Ingress class sluice drives`}},
		{name: "an HTTPRoute without a name", ref: rolloutsv1beta1.TrafficRoutingRef{Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &empty}},
			want: []string{"spec.strategy.canary.trafficRoutings[0].gateway.httpRouteName: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertErrors(t, ValidateRef(path, tt.ref), tt.want)
		})
	}
}

func TestValidateShared(t *testing.T) {
	route := "web"
	path := field.NewPath("spec", "strategy", "canary", "trafficRoutings")
	refs := []rolloutsv1beta1.TrafficRoutingRef{
		{Service: "a", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}, Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &route}},
		{Service: "b", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}},
		{Service: "c", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: &route}},
	}
	assertErrors(t, ValidateShared(path, refs), []string{
		"spec.strategy.canary.trafficRoutings[1].ingress.name: Duplicate value: \"web (also in spec.strategy.canary.trafficRoutings[0])\"",
		"spec.strategy.canary.trafficRoutings[2].gateway.httpRouteName: Duplicate value: \"web (also in spec.strategy.canary.trafficRoutings[0])\"",
	})
}

// assertErrors checks that errs are as many as want and each contains its
// want.
func assertErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d: %q", errs, len(want), want)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), want[i]) {
			t.Errorf("error %d = %q, want one containing %q", i, e.Error(), want[i])
		}
	}
}

func TestRBAC_grantedByTheClusterRole(t *testing.T) {
	role := clusterRole(t)
	if missing := notGranted(role.Rules, RBAC()); len(missing) > 0 {
		t.Fatalf("config/rbac/role.yaml does not grant %v: add a +kubebuilder:rbac marker for each beside the table in kinds.go and run make manifests", missing)
	}
	// The check sees a rule the ClusterRole lacks.
	if missing := notGranted(role.Rules, []rbacv1.PolicyRule{rule("example.sluice.dev", "splits", "get")}); len(missing) != 1 {
		t.Fatalf("a rule the ClusterRole lacks was not reported: %v", missing)
	}
}

func TestNamespaceRBAC(t *testing.T) {
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{lua.ConfigMapName}, Verbs: []string{"get"}}}
	if got := NamespaceRBAC(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NamespaceRBAC() = %v, want %v", got, want)
	}
}

// clusterRole is the manager's ClusterRole, as controller-gen generates it
// from the RBAC markers (the Helm chart ships the same, test/helm checks).
func clusterRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules: run make manifests")
	}
	return role
}

// notGranted lists the group/resource/verb triples of want that no rule
// of have grants (for every object: a rule limited to resourceNames does
// not count).
func notGranted(have, want []rbacv1.PolicyRule) []string {
	var out []string
	for _, w := range want {
		for _, g := range w.APIGroups {
			for _, res := range w.Resources {
				for _, v := range w.Verbs {
					if !granted(have, g, res, v) {
						out = append(out, fmt.Sprintf("%s/%s %s", g, res, v))
					}
				}
			}
		}
	}
	return out
}

func granted(have []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, h := range have {
		if len(h.ResourceNames) == 0 && anyOf(h.APIGroups, group) && anyOf(h.Resources, resource) && anyOf(h.Verbs, verb) {
			return true
		}
	}
	return false
}

func anyOf(list []string, s string) bool {
	return slices.Contains(list, s) || slices.Contains(list, "*")
}

func TestWatches(t *testing.T) {
	got := Watches()
	want := []string{"/v1, Kind=Service", "networking.k8s.io/v1, Kind=Ingress", "gateway.networking.k8s.io/v1, Kind=HTTPRoute"}
	if len(got) != len(want) {
		t.Fatalf("Watches() = %v, want %v", got, want)
	}
	for i, w := range got {
		if w.GVK.String() != want[i] {
			t.Errorf("Watches()[%d] = %v, want %s", i, w.GVK, want[i])
		}
		// A TrafficRouting owns a kind through a watch that starts with the
		// manager: the kind must be served.
		if w.Owned && w.ServedLater {
			t.Errorf("%v is owned and served later: owners watch it from the start", w.GVK)
		}
	}
}
