package kinds

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// table is a list of rows; every answer of this package is derived from
// one, builtin() in sluice, an extended one in tests.
type table []Kind

// find returns the row of gk: the table's, or for a StatefulSet-like
// custom candidate the custom row (known false).
func (tb table) find(gk schema.GroupKind) (k Kind, known, ok bool) {
	for _, k := range tb {
		if k.GroupKind == gk {
			return k, true, true
		}
	}
	if tb.customCandidate(gk) {
		return custom(gk), false, true
	}
	return Kind{}, false, false
}

// customCandidate reports whether gk may be a StatefulSet-like custom
// kind: a kind of a CustomResourceDefinition group (those always contain
// a dot) that no row names.
func (tb table) customCandidate(gk schema.GroupKind) bool {
	for _, k := range tb {
		if k.GroupKind == gk {
			return false
		}
	}
	return strings.Contains(gk.Group, ".") && gk.Kind != ""
}

// GroupKind parses the group and kind of ref.
func GroupKind(ref rolloutsv1beta1.ObjectRef) (schema.GroupKind, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, nil
}

// Known reports whether ref names a kind OpenKruise Rollouts releases by
// name (a row of the table).
func Known(ref rolloutsv1beta1.ObjectRef) bool { return builtin().known(ref) }

func (tb table) known(ref rolloutsv1beta1.ObjectRef) bool {
	gk, err := GroupKind(ref)
	if err != nil {
		return false
	}
	_, known, _ := tb.find(gk)
	return known
}

// IsCustomCandidate reports whether gk may be a StatefulSet-like custom
// kind, one no row names: whether it is one is up to its CRD
// (partition.CheckCustomKind).
func IsCustomCandidate(gk schema.GroupKind) bool { return builtin().customCandidate(gk) }

// KnownKinds lists the kinds Known accepts, as group/Kind, for error
// messages.
func KnownKinds() string { return builtin().knownKinds() }

func (tb table) knownKinds() string {
	names := make([]string, 0, len(tb))
	for _, k := range tb {
		names = append(names, k.GroupKind.Group+"/"+k.GroupKind.Kind)
	}
	return strings.Join(names, ", ")
}

// Supported reports whether this version of sluice releases ref in the
// given style (empty: Partition), and when not, why.
func Supported(ref rolloutsv1beta1.ObjectRef, style rolloutsv1beta1.RollingStyleType) (bool, string) {
	return builtin().supported(ref, style)
}

func (tb table) supported(ref rolloutsv1beta1.ObjectRef, style rolloutsv1beta1.RollingStyleType) (bool, string) {
	gk, err := GroupKind(ref)
	if err != nil {
		return false, err.Error()
	}
	k, _, ok := tb.find(gk)
	if !ok {
		return false, fmt.Sprintf("workload kind %s is not supported yet by this version of sluice", gk)
	}
	if style == "" || style == rolloutsv1beta1.PartitionRollingStyle || slices.Contains(k.Styles, style) {
		return true, ""
	}
	return false, fmt.Sprintf("%s style releases of %s are not supported yet by this version of sluice", style, gk)
}

// ReleasedBlueGreen reports whether a kind named kind (in any group) is
// released blue-green, and names, for messages, the kinds that are
// ("Deployments and CloneSets").
func ReleasedBlueGreen(kind string) (ok bool, which string) {
	return builtin().releasedBlueGreen(kind)
}

func (tb table) releasedBlueGreen(kind string) (bool, string) {
	var names []string
	ok := false
	for _, k := range tb {
		if !slices.Contains(k.Styles, rolloutsv1beta1.BlueGreenRollingStyle) {
			continue
		}
		ok = ok || k.GroupKind.Kind == kind
		if name := k.GroupKind.Kind + "s"; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	which := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		which = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return ok, which
}

// New returns the adapter that releases the target: a workload.Factory.
func New(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
	return builtin().newReleaser(c, reader, t)
}

func (tb table) newReleaser(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
	if ok, why := tb.supported(t.Ref, t.Style); !ok {
		return nil, fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	gk, _ := GroupKind(t.Ref)
	k, _, _ := tb.find(gk)
	return k.New(c, reader, t)
}

// HoldFor returns how updates of kind gk are held for a release.
func HoldFor(gk schema.GroupKind) (workload.Hold, bool) { return builtin().holdFor(gk) }

func (tb table) holdFor(gk schema.GroupKind) (workload.Hold, bool) {
	k, _, ok := tb.find(gk)
	return k.Hold, ok
}

// WorkloadType is the rollouts.kruise.io/workload-type label value for
// ref: its row's, statefulset for any other kind.
func WorkloadType(ref rolloutsv1beta1.ObjectRef) string { return builtin().workloadType(ref) }

func (tb table) workloadType(ref rolloutsv1beta1.ObjectRef) string {
	gk, _ := GroupKind(ref)
	if k, _, ok := tb.find(gk); ok {
		return k.Type
	}
	return rolloutsv1beta1.WorkloadTypeStatefulSet
}

// KeptIn names the objects that keep the revisions of a workload of kind
// gvk: its row's, ControllerRevisions for any other kind.
func KeptIn(gvk schema.GroupVersionKind) revisions.Store { return builtin().keptIn(gvk) }

func (tb table) keptIn(gvk schema.GroupVersionKind) revisions.Store {
	if k, _, ok := tb.find(gvk.GroupKind()); ok {
		return k.Revisions
	}
	return revisions.ControllerRevisions
}

// WebhookRules are the rules of the workload webhook: updates of every
// kind of the table, one rule per group and version, in table order.
func WebhookRules() []admissionregistrationv1.RuleWithOperations { return builtin().webhookRules() }

func (tb table) webhookRules() []admissionregistrationv1.RuleWithOperations {
	var rules []admissionregistrationv1.RuleWithOperations
	at := map[schema.GroupVersion]int{}
	for _, k := range tb {
		gv := schema.GroupVersion{Group: k.GroupKind.Group, Version: k.WebhookVersion}
		i, ok := at[gv]
		if !ok {
			namespaced := admissionregistrationv1.NamespacedScope
			i, at[gv] = len(rules), len(rules)
			rules = append(rules, admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{gv.Group}, APIVersions: []string{gv.Version}, Scope: &namespaced,
				},
			})
		}
		rules[i].Resources = append(rules[i].Resources, k.Resource)
	}
	return rules
}

// Watched lists the kinds the controllers watch from their start (those
// with Watch); the others are watched once a Rollout names them.
func Watched() []Kind { return builtin().watched() }

func (tb table) watched() []Kind {
	var out []Kind
	for _, k := range tb {
		if k.Watch != nil {
			out = append(out, k)
		}
	}
	return out
}

// TemplateRevision computes the update revision of obj, a typed workload of
// kind gk, from obj alone, for the kinds whose revision is a function of
// the object (Kind.TemplateRevision); ok is false for the others, whose
// revision a Releaser's Status reads.
func TemplateRevision(gk schema.GroupKind, obj client.Object) (rev string, ok bool) {
	return builtin().templateRevision(gk, obj)
}

func (tb table) templateRevision(gk schema.GroupKind, obj client.Object) (string, bool) {
	k, known, _ := tb.find(gk)
	if !known || k.TemplateRevision == nil {
		return "", false
	}
	return k.TemplateRevision(obj)
}

// NewObject returns a typed object of kind gk, of the type the controllers
// watch it as, for the kinds watched from their start; ok is false for
// the others.
func NewObject(gk schema.GroupKind) (client.Object, bool) { return builtin().newObject(gk) }

func (tb table) newObject(gk schema.GroupKind) (client.Object, bool) {
	k, known, _ := tb.find(gk)
	if !known || k.Watch == nil {
		return nil, false
	}
	return k.Watch(), true
}

// WatchedFromStart reports whether the workloads of kind gk are watched
// from the controllers' start (Watched).
func WatchedFromStart(gk schema.GroupKind) bool { return builtin().watchedFromStart(gk) }

func (tb table) watchedFromStart(gk schema.GroupKind) bool {
	_, ok := tb.newObject(gk)
	return ok
}

// Dependent is a type of object that workloads control, with the kinds
// whose releases wait on it.
type Dependent struct {
	// Object returns an object of the type, to watch.
	Object func() client.Object
	// Controllers are the kinds whose Dependents name the type.
	Controllers []schema.GroupKind
}

// Dependents lists, once per type, the objects that the kinds' Dependents
// name.
func Dependents() []Dependent { return builtin().dependents() }

func (tb table) dependents() []Dependent {
	var out []Dependent
	at := map[string]int{}
	for _, k := range tb {
		for _, d := range k.Dependents {
			typ := fmt.Sprintf("%T", d())
			i, ok := at[typ]
			if !ok {
				i, at[typ] = len(out), len(out)
				out = append(out, Dependent{Object: d})
			}
			out[i].Controllers = append(out[i].Controllers, k.GroupKind)
		}
	}
	return out
}
