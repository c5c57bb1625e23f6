// Package providers is the one place that knows every kind of traffic
// route. Each kind is one row of the table in kinds.go: how to build its
// providers, how to validate the entry's reference to it (each error at
// its field), which objects the controllers watch and index for it, what
// of a step's traffic it cannot express or ignores, and the RBAC it needs.
// The controllers (controllers/rollout, controllers/trafficrouting), the
// admission webhook (webhook/rollout) and the Supported condition
// (release/coverage) loop over that table through the functions here. A
// new kind of route is one row plus its own package (and the RBAC marker
// of its rules beside the table: TestRBAC_grantedByTheClusterRole checks
// that config/rbac grants what the table declares, and test/helm that the
// chart does).
package providers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/ingress"
	"github.com/sluice-dev/sluice/traffic/service"
)

// Deps are what providers are built with.
type Deps struct {
	// Client writes the routes.
	Client client.Client
	// Reader reads them (not a cache: what it reads decides what is
	// written).
	Reader client.Reader
	// Namespace is the manager's own namespace, where the Lua scripts of
	// custom objects are read (the ConfigMap kruise-rollout-configuration);
	// empty means lua.DefaultNamespace.
	Namespace string
}

// Watch is a kind of object that the traffic of trafficRoutings entries
// goes through: the controllers watch it (metadata only) and index the
// Rollouts and TrafficRoutings by the objects of it they name (Keys).
type Watch struct {
	// GVK is the kind.
	GVK schema.GroupVersionKind
	// ServedLater: the cluster may not serve the kind (a CRD, installed
	// later or never); it is watched once served.
	ServedLater bool
	// Owned: a TrafficRouting creates objects of the kind (a canary
	// Ingress) and owns them, and puts back what is changed behind its
	// back. Only a kind every cluster serves (not ServedLater) can be.
	Owned bool
}

// Key is the RoutesIndex key of the object of kind named name.
func Key(kind, name string) string {
	return kind + "/" + name
}

// Routes reports whether this version of sluice routes traffic for the
// entry ref: it names routes of a kind sluice drives (an Ingress of a
// built-in class, an HTTPRoute, custom objects). Entries it does not
// route are left alone entirely (their Services too).
func Routes(ref rolloutsv1beta1.TrafficRoutingRef) bool {
	for _, k := range kinds {
		if k.drives != nil && k.drives(scope(k, ref)) {
			return true
		}
	}
	return false
}

// New returns the providers of the entry t.Ref, in the order they are
// driven. It reads through d.Reader and writes through d.Client. It
// fails, wrapping traffic.ErrUnsupported, when the entry names nothing
// this version routes.
func New(d Deps, t traffic.Target) ([]traffic.Provider, error) {
	var out []traffic.Provider
	for _, k := range kinds {
		kt := t
		kt.Ref = scope(k, t.Ref)
		if k.build == nil || k.drives == nil || !k.drives(kt.Ref) {
			continue
		}
		ps, err := k.build(d, kt)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no route sluice drives for Service %s: set %s: %w", t.Ref.Service, fieldList("or"), traffic.ErrUnsupported)
	}
	return out, nil
}

// Services returns the Services of the entry t.Ref.
func Services(d Deps, t traffic.Target) traffic.Services {
	return service.New(d.Client, d.Reader, t)
}

// ValidateRef returns what is wrong with the routes the trafficRoutings
// entry ref (at path) names: none named, a name missing, or something this
// version cannot drive. Each error names its field.
func ValidateRef(path *field.Path, ref rolloutsv1beta1.TrafficRoutingRef) field.ErrorList {
	var errs field.ErrorList
	named := false
	for _, k := range kinds {
		named = named || (k.named != nil && k.named(scope(k, ref)))
	}
	if !named {
		errs = append(errs, field.Required(path, "set one of "+fieldList("and")))
	}
	for _, k := range kinds {
		if k.validate != nil {
			errs = append(errs, k.validate(path, scope(k, ref))...)
		}
		if k.unsupported != nil {
			errs = append(errs, k.unsupported(path, scope(k, ref))...)
		}
		for i, o := range ref.CustomNetworkRefs {
			if k.object != nil && takes(k, o) {
				errs = append(errs, k.object(path.Child(customField).Index(i), o)...)
			}
		}
	}
	return errs
}

// ValidateShared returns the routes that two of the entries refs (the
// trafficRoutings at path) both name: each entry's changes to the route
// would undo the other's.
func ValidateShared(path *field.Path, refs []rolloutsv1beta1.TrafficRoutingRef) field.ErrorList {
	var errs field.ErrorList
	for _, k := range kinds {
		if k.routes == nil {
			continue
		}
		seen := map[string]int{}
		for i, ref := range refs {
			for _, r := range k.routes(path.Index(i), scope(k, ref)) {
				if j, ok := seen[r.name]; ok {
					errs = append(errs, field.Duplicate(r.path, fmt.Sprintf("%s (also in %s)", r.name, path.Index(j))))
					continue
				}
				seen[r.name] = i
			}
		}
	}
	return errs
}

// Unsupported lists the parts of the entry ref (at path, e.g.
// spec.strategy.canary.trafficRoutings[0]) that this version of sluice
// cannot drive, each naming the field, the value and the fix. A release
// through them would have no traffic control: admission refuses them, and
// a Rollout stored with one (before sluice was installed) waits, held.
func Unsupported(path string, ref rolloutsv1beta1.TrafficRoutingRef) []string {
	var out []string
	for _, k := range kinds {
		if k.unsupported == nil {
			continue
		}
		for _, e := range k.unsupported(field.NewPath(path), scope(k, ref)) {
			out = append(out, fmt.Sprintf("%s %q: %v", e.Field, e.BadValue, e.Detail))
		}
	}
	return out
}

// Check returns why the routes of the entry ref cannot express the traffic
// of a step (its matches, together with its weight); nil when they can.
func Check(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) error {
	var errs []error
	for _, k := range kinds {
		if k.check != nil {
			errs = append(errs, k.check(scope(k, ref), s))
		}
	}
	return errors.Join(errs...)
}

// Ignores lists what of a step's traffic the routes of the entry ref
// cannot apply and leave without effect (e.g. a request header modifier on
// nginx), naming the route.
func Ignores(ref rolloutsv1beta1.TrafficRoutingRef, s rolloutsv1beta1.TrafficRoutingStrategy) []string {
	var out []string
	for _, k := range kinds {
		if k.ignores != nil {
			out = append(out, k.ignores(scope(k, ref), s)...)
		}
	}
	return out
}

// Watches returns the kinds of objects the traffic of trafficRoutings
// entries goes through (the Services, then each kind of route's), for the
// controllers to watch.
func Watches() []Watch {
	var out []Watch
	for _, k := range all() {
		out = append(out, k.watches...)
	}
	return out
}

// Keys returns the RoutesIndex keys of refs: the objects their traffic
// goes through, those they name and those sluice creates beside them.
func Keys(refs []rolloutsv1beta1.TrafficRoutingRef) []string {
	var out []string
	for _, ref := range refs {
		for _, k := range all() {
			if k.keys != nil {
				out = append(out, k.keys(scope(k, ref))...)
			}
		}
	}
	return out
}

// RBAC returns the rules the manager's ClusterRole must grant to drive
// every kind of route and the Services beside them.
func RBAC() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, k := range all() {
		out = append(out, k.rbac...)
	}
	return out
}

// NamespaceRBAC returns the rules a Role in the manager's own namespace
// must grant (the ConfigMap of Lua scripts).
func NamespaceRBAC() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, k := range all() {
		out = append(out, k.namespaceRBAC...)
	}
	return out
}

// all is the Services' row and the kinds of routes.
func all() []kind {
	return append([]kind{services}, kinds...)
}

// fieldList lists the fields of the kinds of routes, the last two joined
// by conjunction ("ingress, gateway or customNetworkRefs").
func fieldList(conjunction string) string {
	var fields []string
	for _, k := range kinds {
		if k.field != "" && !slices.Contains(fields, k.field) {
			fields = append(fields, k.field)
		}
	}
	if len(fields) < 2 {
		return strings.Join(fields, "")
	}
	return strings.Join(fields[:len(fields)-1], ", ") + " " + conjunction + " " + fields[len(fields)-1]
}

// checkClass returns why sluice cannot drive the Ingress class of the entry
// ref, naming the classes it drives; nil when it can, or ref names no
// Ingress.
func checkClass(ref rolloutsv1beta1.TrafficRoutingRef) error {
	if ref.Ingress == nil || ingress.Supported(ref.Ingress.ClassType) {
		return nil
	}
	return fmt.Errorf("not an Ingress class sluice drives: use one of %s (empty means nginx), "+
		"or route through a Gateway API HTTPRoute (gateway.httpRouteName) or custom objects scripted in Lua (customNetworkRefs)",
		strings.Join(ingress.Classes(), ", "))
}

func classOf(i *rolloutsv1beta1.IngressTrafficRouting) string {
	if i.ClassType == "" {
		return ingress.ClassNginx
	}
	return i.ClassType
}
