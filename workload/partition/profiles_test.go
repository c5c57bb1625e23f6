package partition

import "k8s.io/apimachinery/pkg/runtime/schema"

// The profiles the tests release, as the workload kinds table
// (workload/kinds) gives them to their kinds.
var (
	testStatefulSet       = StatefulSet(schema.GroupKind{Group: "apps", Kind: "StatefulSet"})
	testCloneSet          = CloneSet(schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"})
	testAdvancedDaemonSet = AdvancedDaemonSet(schema.GroupKind{Group: "apps.kruise.io", Kind: "DaemonSet"})
)
