// Package lua shifts traffic through objects of any kind (an Istio
// VirtualService or DestinationRule, an APISIX route, ...) named in a
// Rollout's trafficRoutings[].customNetworkRefs, with a Lua script per kind.
//
// The contract is OpenKruise Rollouts' own, so that its scripts run
// unchanged: a script for the kind Kind of group group is the key
// lua.traffic.routing.<Kind>.<group> of the ConfigMap
// kruise-rollout-configuration in the manager's namespace, else one built
// into sluice. It gets a global table obj (the object's original spec,
// labels and annotations, the weights, matches, Services and header
// modifier of the step) and returns the object's data with the new spec.
//
// Scripts run in a sandbox (sandbox.go): a fresh Lua state per evaluation
// with only the base, table, string and math libraries, and a deadline,
// an instruction budget, stack limits and a cap on the size of the
// result. The spec before the release is kept in the annotation
// rollouts.kruise.io/original-spec-configuration of the object, every
// evaluation starts from it, and Finalize writes it back.
package lua

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ConfigMapName is the ConfigMap, in the manager's namespace, that holds
// users' scripts (the name OpenKruise Rollouts uses).
const ConfigMapName = "kruise-rollout-configuration"

// KeyPrefix starts the ConfigMap key of a kind's script:
// lua.traffic.routing.<Kind>.<group>.
const KeyPrefix = "lua.traffic.routing."

// OriginalAnnotation on a routed object keeps its spec, labels and
// annotations before the release, as JSON (the annotation and shape
// OpenKruise Rollouts uses).
const OriginalAnnotation = "rollouts.kruise.io/original-spec-configuration"

// DefaultNamespace is the manager's namespace when none is known.
const DefaultNamespace = "sluice-system"

// ScriptKey is the ConfigMap key of the script for the kind gk.
func ScriptKey(gk schema.GroupKind) string {
	return KeyPrefix + gk.Kind + "." + gk.Group
}

// Options are what a Router needs besides its object.
type Options struct {
	// Namespace is the manager's own namespace, where the ConfigMap
	// ConfigMapName of users' scripts is read; empty means
	// DefaultNamespace.
	Namespace string
}

// namespace is the namespace o names, or DefaultNamespace.
func (o Options) namespace() string {
	if o.Namespace != "" {
		return o.Namespace
	}
	return DefaultNamespace
}

// ScriptError is a script that failed: it did not compile, raised an
// error, ran out of its budget, or returned something that is not an
// object's data. Its message carries the script's own.
type ScriptError struct {
	// Script names the script: the ConfigMap key or the built-in file.
	Script string
	// Message is what went wrong, as the script or the sandbox said it.
	Message string
}

// Error implements error.
func (e *ScriptError) Error() string {
	return fmt.Sprintf("Lua script %s: %s", e.Script, strings.TrimSpace(e.Message))
}
