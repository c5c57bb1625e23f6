package providers

import (
	"context"
	"errors"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/lua"
)

// splitKind is the example kind of route: a custom object driven by its
// own provider (splitRouter) instead of a Lua script.
var splitKind = schema.GroupVersionKind{Group: "example.sluice.dev", Version: "v1", Kind: "Split"}

// splitRouter is the example kind's provider: it only says what it was
// built for.
type splitRouter struct {
	t    traffic.Target
	name string
}

func (splitRouter) EnsureRoutes(context.Context, traffic.Desired) (bool, error) { return true, nil }
func (splitRouter) Finalize(context.Context) (bool, error)                      { return true, nil }

// splitRule is the RBAC the example kind declares.
var splitRule = rule(splitKind.Group, "splits", "get", "list", "watch", "patch")

// exampleKind is the row that adds the example kind: nothing else is
// changed to add it.
var exampleKind = kind{
	field:  customField,
	claims: []schema.GroupKind{splitKind.GroupKind()},
	named:  func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return len(ref.CustomNetworkRefs) > 0 },
	drives: func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return len(ref.CustomNetworkRefs) > 0 },
	build: func(_ Deps, t traffic.Target) ([]traffic.Provider, error) {
		var out []traffic.Provider
		for _, o := range t.Ref.CustomNetworkRefs {
			out = append(out, splitRouter{t: t, name: o.Name})
		}
		return out, nil
	},
	object: func(path *field.Path, o rolloutsv1beta1.ObjectRef) field.ErrorList {
		if o.Name == "" {
			return field.ErrorList{field.Required(path.Child("name"), "name the Split")}
		}
		return nil
	},
	routes: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) []route {
		var out []route
		for _, o := range ref.CustomNetworkRefs {
			out = append(out, route{path: path.Child(customField), name: o.Name})
		}
		return out
	},
	keys: func(ref rolloutsv1beta1.TrafficRoutingRef) []string {
		var out []string
		for _, o := range ref.CustomNetworkRefs {
			out = append(out, Key(splitKind.Kind, o.Name))
		}
		return out
	},
	check: func(_ rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error {
		if len(s.Matches) > 0 {
			return errors.New("a Split cannot match requests")
		}
		return nil
	},
	ignores: func(_ rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) []string {
		if s.RequestHeaderModifier != nil {
			return []string{"a Split cannot modify request headers"}
		}
		return nil
	},
	watches: []Watch{{GVK: splitKind, ServedLater: true}},
	rbac:    []rbacv1.PolicyRule{splitRule},
}

// withExampleKind adds exampleKind to the table for the test.
func withExampleKind(t *testing.T) {
	saved := kinds
	kinds = append(slices.Clone(kinds), exampleKind)
	t.Cleanup(func() { kinds = saved })
}

func splitRef(name string) rolloutsv1beta1.ObjectRef {
	return rolloutsv1beta1.ObjectRef{APIVersion: splitKind.GroupVersion().String(), Kind: splitKind.Kind, Name: name}
}

var virtualService = rolloutsv1beta1.ObjectRef{APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Name: "reviews"}

// TestExampleKind shows that a kind of route is added by one row of the
// table: building its providers, validating the reference to it, the
// traffic it cannot express or ignores, what the controllers watch and
// index, and its RBAC all come from the row, and without the row none
// of it happens.
func TestExampleKind(t *testing.T) {
	ref := rolloutsv1beta1.TrafficRoutingRef{Service: "web", CustomNetworkRefs: []rolloutsv1beta1.ObjectRef{virtualService, splitRef("web")}}
	target := traffic.Target{Namespace: "shop", Rollout: "web", Ref: ref}
	matches := rolloutsv1beta1.TrafficRoutingStrategy{Matches: []rolloutsv1beta1.HttpRouteMatch{{}}}
	header := rolloutsv1beta1.TrafficRoutingStrategy{RequestHeaderModifier: &rolloutsv1beta1.HTTPHeaderFilter{}}

	t.Run("without the row", func(t *testing.T) {
		ps, err := New(Deps{}, target)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 {
			t.Fatalf("built %d providers, want both objects scripted in Lua", len(ps))
		}
		for _, p := range ps {
			if _, ok := p.(*lua.Router); !ok {
				t.Errorf("provider %T, want a Lua router", p)
			}
		}
		if Check(ref, matches) != nil || len(Ignores(ref, header)) != 0 || slices.Contains(Keys([]rolloutsv1beta1.TrafficRoutingRef{ref}), "Split/web") ||
			slices.ContainsFunc(Watches(), func(w Watch) bool { return w.GVK == splitKind }) || len(notGranted(RBAC(), []rbacv1.PolicyRule{splitRule})) == 0 {
			t.Fatal("the example kind is known without its row")
		}
	})

	t.Run("with the row", func(t *testing.T) {
		withExampleKind(t)
		if !Routes(rolloutsv1beta1.TrafficRoutingRef{Service: "web", CustomNetworkRefs: []rolloutsv1beta1.ObjectRef{splitRef("web")}}) {
			t.Error("Routes() = false for an entry naming only a Split")
		}
		ps, err := New(Deps{Namespace: "ops"}, target)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 {
			t.Fatalf("built %d providers, want 2", len(ps))
		}
		if _, ok := ps[0].(*lua.Router); !ok {
			t.Errorf("first provider %T, want the VirtualService's Lua router", ps[0])
		}
		split, ok := ps[1].(splitRouter)
		if !ok || split.name != "web" || len(split.t.Ref.CustomNetworkRefs) != 1 {
			t.Errorf("second provider %#v, want the Split's own router, seeing the Split only", ps[1])
		}

		path := field.NewPath("spec", "strategy", "canary", "trafficRoutings").Index(0)
		bad := rolloutsv1beta1.TrafficRoutingRef{Service: "web", CustomNetworkRefs: []rolloutsv1beta1.ObjectRef{virtualService, splitRef("")}}
		assertErrors(t, ValidateRef(path, bad), []string{"spec.strategy.canary.trafficRoutings[0].customNetworkRefs[1].name: Required value: name the Split"})
		assertErrors(t, ValidateShared(path.Root().Child("strategy", "canary", "trafficRoutings"), []rolloutsv1beta1.TrafficRoutingRef{ref, ref}),
			[]string{"spec.strategy.canary.trafficRoutings[1].customNetworkRefs: Duplicate value: \"web (also in spec.strategy.canary.trafficRoutings[0])\""})
		if err := Check(ref, matches); err == nil || err.Error() != "a Split cannot match requests" {
			t.Errorf("Check() = %v, want the Split's", err)
		}
		if got := Ignores(ref, header); !slices.Equal(got, []string{"a Split cannot modify request headers"}) {
			t.Errorf("Ignores() = %v, want the Split's", got)
		}

		if keys := Keys([]rolloutsv1beta1.TrafficRoutingRef{ref}); !slices.Equal(keys, []string{"Service/web", "Service/web-canary", "Split/web"}) {
			t.Errorf("Keys() = %v, want the Services' and the Split's", keys)
		}
		if !slices.Contains(Watches(), Watch{GVK: splitKind, ServedLater: true}) {
			t.Errorf("Watches() = %v, want the Split's, once served", Watches())
		}
		if missing := notGranted(RBAC(), []rbacv1.PolicyRule{splitRule}); len(missing) != 0 {
			t.Errorf("RBAC() lacks %v", missing)
		}
		// The ClusterRole the repository ships lacks it: the check of the
		// table against it says so (until the row's marker is added).
		if missing := notGranted(clusterRole(t).Rules, RBAC()); !slices.Equal(missing, []string{"example.sluice.dev/splits get", "example.sluice.dev/splits list",
			"example.sluice.dev/splits watch", "example.sluice.dev/splits patch"}) {
			t.Errorf("not granted %v, want the Split's rule only", missing)
		}
	})
}
