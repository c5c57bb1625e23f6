package e2e

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sluice-dev/sluice/test/fakeoperators"
)

// The OpenKruise kinds, with CRDs generated from test/kruiseapi and test
// doubles (test/fakeoperators) standing in for kruise-manager.

// cloneSets is an OpenKruise CloneSet: partition = pods kept on the old
// revision, held at "100%". It is created without a partition and with
// its own maxUnavailable, which the release must leave as they were.
var cloneSets = partitionKind{
	gvk:       fakeoperators.CloneSetGVK,
	partition: []string{"spec", "updateStrategy", "partition"},
	hold:      "100%",
	crds:      []string{"apps.kruise.io_clonesets.yaml"},
	operator:  func() []fakeoperators.Controller { return []fakeoperators.Controller{fakeoperators.CloneSet()} },
	spec: func(name string, replicas int32, image string) map[string]any {
		return map[string]any{
			"replicas":       int64(replicas),
			"selector":       selectorOf(name),
			"template":       podTemplate(name, image),
			"updateStrategy": map[string]any{"type": "ReCreate", "maxUnavailable": "50%"},
		}
	},
}

// advancedStatefulSets is an OpenKruise Advanced StatefulSet of version
// version: ordinal partition like a native StatefulSet. It is created with
// a rollingUpdate that has a maxUnavailable but no partition.
func advancedStatefulSets(version string) partitionKind {
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: version, Kind: "StatefulSet"}
	return partitionKind{
		gvk:       gvk,
		partition: []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
		hold:      int64(32767),
		ordinals:  true,
		crds:      []string{"apps.kruise.io_statefulsets.yaml"},
		operator: func() []fakeoperators.Controller {
			return []fakeoperators.Controller{fakeoperators.StatefulSetLike(gvk, true)}
		},
		spec: func(name string, replicas int32, image string) map[string]any {
			return map[string]any{
				"replicas": int64(replicas),
				"selector": selectorOf(name),
				"template": podTemplate(name, image),
				"updateStrategy": map[string]any{
					"type":          "RollingUpdate",
					"rollingUpdate": map[string]any{"maxUnavailable": int64(2), "podUpdatePolicy": "ReCreate"},
				},
			}
		},
	}
}

// advancedDaemonSets is an OpenKruise Advanced DaemonSet: one pod per node
// (the 3 fake nodes); partition = nodes kept on the old revision.
var advancedDaemonSets = partitionKind{
	gvk:       fakeoperators.DaemonSetGVK,
	partition: []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
	hold:      int64(32767),
	crds:      []string{"apps.kruise.io_daemonsets.yaml"},
	operator: func() []fakeoperators.Controller {
		return []fakeoperators.Controller{fakeoperators.DaemonSet(map[string]string{"type": "kwok"})}
	},
	spec: func(name string, _ int32, image string) map[string]any {
		return map[string]any{
			"selector": selectorOf(name),
			"template": podTemplate(name, image),
			"updateStrategy": map[string]any{
				"type":          "RollingUpdate",
				"rollingUpdate": map[string]any{"rollingUpdateType": "Standard", "partition": int64(0)},
			},
		}
	},
}

func TestCloneSet_multiBatch_releasedThroughItsPartitionAndRestored(t *testing.T) {
	scenarioMultiBatch(t, cloneSets, 4, 4)
}

func TestCloneSet_rollbackMidRelease_completesAtOnce(t *testing.T) {
	scenarioRollback(t, cloneSets, 4, 4)
}

func TestCloneSet_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	scenarioDeleted(t, cloneSets, 4, 4)
}

func TestAdvancedStatefulSet_multiBatch_releasedByOrdinalAndRestored(t *testing.T) {
	scenarioMultiBatch(t, advancedStatefulSets("v1beta1"), 4, 4)
}

func TestAdvancedStatefulSet_v1alpha1_rollbackMidRelease_completesAtOnce(t *testing.T) {
	scenarioRollback(t, advancedStatefulSets("v1alpha1"), 4, 4)
}

func TestAdvancedStatefulSet_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	scenarioDeleted(t, advancedStatefulSets("v1beta1"), 4, 4)
}

func TestAdvancedDaemonSet_multiBatch_releasedNodeByNodeAndRestored(t *testing.T) {
	scenarioMultiBatch(t, advancedDaemonSets, 0, 3)
}

func TestAdvancedDaemonSet_rollbackMidRelease_completesAtOnce(t *testing.T) {
	scenarioRollback(t, advancedDaemonSets, 0, 3)
}

func TestAdvancedDaemonSet_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	scenarioDeleted(t, advancedDaemonSets, 0, 3)
}

func TestCloneSet_newRevisionMidRelease_restartsAtStepOne(t *testing.T) {
	scenarioNewRevision(t, cloneSets, 4, 4)
}
