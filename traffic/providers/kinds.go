package providers

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/gateway"
	"github.com/sluice-dev/sluice/traffic/ingress"
	"github.com/sluice-dev/sluice/traffic/lua"
)

// kind describes one kind of route: everything sluice does with the
// routes of that kind that a trafficRoutings entry names. A function left
// nil does nothing (names nothing, builds nothing, finds nothing wrong).
type kind struct {
	// field is the trafficRoutings field that names routes of the kind
	// (ingress, gateway, customNetworkRefs).
	field string
	// claims are the kinds of custom objects (customNetworkRefs) the row
	// drives itself; those no row claims are scripted in Lua. Every
	// function of a row sees the entry's customNetworkRefs it takes only
	// (see scope).
	claims []schema.GroupKind
	// named reports whether the entry names routes of the kind, driven or
	// not.
	named func(ref rolloutsv1beta1.TrafficRoutingRef) bool
	// drives reports whether this version drives the routes of the kind
	// that the entry names.
	drives func(ref rolloutsv1beta1.TrafficRoutingRef) bool
	// build returns the providers of the routes of the kind that the entry
	// t.Ref names.
	build func(d Deps, t traffic.Target) ([]traffic.Provider, error)
	// validate returns what is wrong with the reference (a name missing),
	// each error at its field below path, the entry's path.
	validate func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList
	// object returns what is wrong with one custom object the row takes
	// (see claims), at its path (customNetworkRefs[i]).
	object func(path *field.Path, o rolloutsv1beta1.ObjectRef) field.ErrorList
	// unsupported returns what of the reference this version cannot drive
	// (an Ingress class), each error at its field below path.
	unsupported func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList
	// routes are the user's objects the entry names, each at its field
	// below path: two entries must not name the same.
	routes func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) []route
	// keys are the RoutesIndex keys (Key(kind, name)) of the objects of
	// the kind the entry's traffic goes through: those it names and those
	// sluice creates beside them.
	keys func(ref rolloutsv1beta1.TrafficRoutingRef) []string
	// check returns why the routes cannot express the traffic of a step.
	check func(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error
	// ignores lists what of a step's traffic the routes leave without
	// effect.
	ignores func(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) []string
	// watches are the kinds of objects the controllers watch for it.
	watches []Watch
	// rbac are the rules the manager's ClusterRole grants for it; the
	// RBAC marker beside the table (in this file) puts them there.
	rbac []rbacv1.PolicyRule
	// namespaceRBAC are the rules a Role in the manager's own namespace
	// grants for it (the Helm chart's templates/rbac.yaml).
	namespaceRBAC []rbacv1.PolicyRule
}

// customField is the trafficRoutings field naming custom objects.
const customField = "customNetworkRefs"

// route is one object an entry names, at its field.
type route struct {
	path *field.Path
	name string
}

// The RBAC the rows below declare, for controller-gen:
//
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;update;patch

// services is what every entry sluice drives goes through besides its
// routes: the stable Service it names and the canary Service sluice
// creates beside it (traffic/service).
var services = kind{
	keys: func(ref rolloutsv1beta1.TrafficRoutingRef) []string {
		return []string{Key("Service", ref.Service), Key("Service", traffic.CanaryServiceName(ref.Service))}
	},
	watches: []Watch{{GVK: corev1.SchemeGroupVersion.WithKind("Service")}},
	rbac:    []rbacv1.PolicyRule{rule("", "services", "get", "list", "watch", "create", "update", "patch", "delete")},
}

// kinds is every kind of route, in the order an entry's providers are
// driven: custom objects first, as OpenKruise Rollouts drives them.
var kinds = []kind{
	{
		// Custom objects of any kind, scripted in Lua (traffic/lua).
		field:  customField,
		named:  func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return len(ref.CustomNetworkRefs) > 0 },
		drives: func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return len(ref.CustomNetworkRefs) > 0 },
		build: func(d Deps, t traffic.Target) ([]traffic.Provider, error) {
			var out []traffic.Provider
			for _, ref := range t.Ref.CustomNetworkRefs {
				p, err := lua.New(d.Client, d.Reader, t, ref, lua.Options{Namespace: d.Namespace})
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			return out, nil
		},
		// The objects' own kinds are granted by the user (docs/traffic-lua.md).
		namespaceRBAC: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{lua.ConfigMapName}, Verbs: []string{"get"}}},
	},
	{
		// An Ingress of a built-in class, through a canary Ingress
		// (traffic/ingress).
		field:  "ingress",
		named:  func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return ref.Ingress != nil },
		drives: drivesIngress,
		build: func(d Deps, t traffic.Target) ([]traffic.Provider, error) {
			return one(ingress.New(d.Client, d.Reader, t))
		},
		validate: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList {
			if ref.Ingress != nil && ref.Ingress.Name == "" {
				return field.ErrorList{field.Required(path.Child("ingress", "name"), "name the Ingress")}
			}
			return nil
		},
		unsupported: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList {
			if err := checkClass(ref); err != nil {
				return field.ErrorList{field.Invalid(path.Child("ingress", "classType"), ref.Ingress.ClassType, err.Error())}
			}
			return nil
		},
		routes: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) []route {
			if ref.Ingress == nil || ref.Ingress.Name == "" {
				return nil
			}
			return []route{{path: path.Child("ingress", "name"), name: ref.Ingress.Name}}
		},
		keys: func(ref rolloutsv1beta1.TrafficRoutingRef) []string {
			if ref.Ingress == nil {
				return nil
			}
			return []string{Key("Ingress", ref.Ingress.Name), Key("Ingress", ingress.CanaryName(ref.Ingress.Name))}
		},
		check: func(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error {
			if !drivesIngress(ref) {
				return nil
			}
			if err := ingress.Check(ref.Ingress.ClassType, s); err != nil {
				return fmt.Errorf("ingress %s (class %s): %w", ref.Ingress.Name, classOf(ref.Ingress), err)
			}
			return nil
		},
		ignores: func(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) []string {
			if ref.Ingress == nil {
				return nil
			}
			if why := ingress.Ignores(ref.Ingress.ClassType, s); why != "" {
				return []string{fmt.Sprintf("ingress %s (class %s): %s", ref.Ingress.Name, classOf(ref.Ingress), why)}
			}
			return nil
		},
		watches: []Watch{{GVK: networkingv1.SchemeGroupVersion.WithKind("Ingress"), Owned: true}},
		rbac:    []rbacv1.PolicyRule{rule("networking.k8s.io", "ingresses", "get", "list", "watch", "create", "update", "patch", "delete")},
	},
	{
		// A Gateway API HTTPRoute, its rules borrowed (traffic/gateway).
		field:  "gateway",
		named:  func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return ref.Gateway != nil },
		drives: func(ref rolloutsv1beta1.TrafficRoutingRef) bool { return ref.Gateway != nil },
		build: func(d Deps, t traffic.Target) ([]traffic.Provider, error) {
			return one(gateway.New(d.Client, d.Reader, t))
		},
		validate: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList {
			if ref.Gateway != nil && httpRouteName(ref) == "" {
				return field.ErrorList{field.Required(path.Child("gateway", "httpRouteName"), "name the HTTPRoute")}
			}
			return nil
		},
		routes: func(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) []route {
			if httpRouteName(ref) == "" {
				return nil
			}
			return []route{{path: path.Child("gateway", "httpRouteName"), name: httpRouteName(ref)}}
		},
		keys: func(ref rolloutsv1beta1.TrafficRoutingRef) []string {
			if ref.Gateway == nil || ref.Gateway.HTTPRouteName == nil {
				return nil
			}
			return []string{Key(gateway.HTTPRouteKind.Kind, *ref.Gateway.HTTPRouteName)}
		},
		check: func(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error {
			if ref.Gateway == nil || ref.Gateway.HTTPRouteName == nil {
				return nil
			}
			if err := gateway.Check(s); err != nil {
				return fmt.Errorf("HTTPRoute %s: %w", *ref.Gateway.HTTPRouteName, err)
			}
			return nil
		},
		// The Gateway API is a CRD: clusters without it lose nothing.
		watches: []Watch{{GVK: gateway.HTTPRouteKind, ServedLater: true}},
		rbac:    []rbacv1.PolicyRule{rule("gateway.networking.k8s.io", "httproutes", "get", "list", "watch", "update", "patch")},
	},
}

// one is the provider p that a constructor returned, as a list.
func one[P traffic.Provider](p P, err error) ([]traffic.Provider, error) {
	if err != nil {
		return nil, err
	}
	return []traffic.Provider{p}, nil
}

// rule is the RBAC rule granting verbs on resource of group.
func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

// scope is the entry ref as the row k sees it: of its customNetworkRefs,
// a row that claims kinds sees those of its kinds, the row of
// customNetworkRefs that claims none (Lua) those no row claims, and any
// other row all.
func scope(k kind, ref rolloutsv1beta1.TrafficRoutingRef) rolloutsv1beta1.TrafficRoutingRef {
	if len(k.claims) == 0 && k.field != customField || len(ref.CustomNetworkRefs) == 0 {
		return ref
	}
	var refs []rolloutsv1beta1.ObjectRef
	for _, o := range ref.CustomNetworkRefs {
		if takes(k, o) {
			refs = append(refs, o)
		}
	}
	ref.CustomNetworkRefs = refs
	return ref
}

// takes reports whether the row k drives the custom object o: its kind is
// one k claims, or k is the row of customNetworkRefs that claims none and
// no row claims it.
func takes(k kind, o rolloutsv1beta1.ObjectRef) bool {
	gk := groupKindOf(o)
	if len(k.claims) > 0 {
		return slices.Contains(k.claims, gk)
	}
	return k.field == customField && !claimed(gk)
}

// claimed reports whether a row drives custom objects of the kind gk
// itself.
func claimed(gk schema.GroupKind) bool {
	for _, k := range kinds {
		if slices.Contains(k.claims, gk) {
			return true
		}
	}
	return false
}

// groupKindOf is the kind of the object o names (the group of a bad
// apiVersion is taken as written: lua.New reports it).
func groupKindOf(o rolloutsv1beta1.ObjectRef) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return schema.GroupKind{Group: o.APIVersion, Kind: o.Kind}
	}
	return gv.WithKind(o.Kind).GroupKind()
}

// drivesIngress reports whether ref names an Ingress of a built-in class.
func drivesIngress(ref rolloutsv1beta1.TrafficRoutingRef) bool {
	return ref.Ingress != nil && ingress.Supported(ref.Ingress.ClassType)
}

// httpRouteName is the HTTPRoute ref names, or "".
func httpRouteName(ref rolloutsv1beta1.TrafficRoutingRef) string {
	if ref.Gateway == nil || ref.Gateway.HTTPRouteName == nil {
		return ""
	}
	return *ref.Gateway.HTTPRouteName
}
