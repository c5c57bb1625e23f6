package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/fakeoperators"
)

const gameServerSetCRD = "games.example.com_gameserversets.yaml"

// gameServerSets is a StatefulSet-like custom kind (CRD in testdata; its
// objects are labelled rollouts.kruise.io/workload-type: statefulset), run by a test
// double that honours its partition. It is created without a partition:
// after a release it has none again.
var gameServerSets = func() partitionKind {
	k := customKind("games.example.com", "GameServerSet", "gameserversets")
	k.crds = []string{gameServerSetCRD}
	return k
}()

// customKind is a StatefulSet-like custom kind served by the
// GameServerSet CRD renamed to group, kind and plural.
func customKind(group, kind, plural string) partitionKind {
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
	return partitionKind{
		gvk:       gvk,
		partition: []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
		hold:      int64(32767),
		ordinals:  true,
		resource:  &schema.GroupResource{Group: group, Resource: plural},
		operator: func() []fakeoperators.Controller {
			return []fakeoperators.Controller{fakeoperators.StatefulSetLike(gvk, false)}
		},
		spec: func(name string, replicas int32, image string) map[string]any {
			return map[string]any{
				"replicas":       int64(replicas),
				"selector":       selectorOf(name),
				"template":       podTemplate(name, image),
				"updateStrategy": map[string]any{"type": "RollingUpdate"},
			}
		},
	}
}

// renamed edits the GameServerSet CRD into another kind; with label false
// it drops the workload-type label, with partition false the partition
// from its schema.
func renamed(k partitionKind, label, partition bool) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Name = k.resource.Resource + "." + k.gvk.Group
		crd.Spec.Group = k.gvk.Group
		crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{
			Kind: k.gvk.Kind, ListKind: k.gvk.Kind + "List", Plural: k.resource.Resource, Singular: strings.ToLower(k.gvk.Kind),
		}
		if !label {
			delete(crd.Labels, rolloutsv1beta1.WorkloadTypeLabel)
		}
		if !partition {
			spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			strategy := spec.Properties["updateStrategy"]
			rolling := strategy.Properties["rollingUpdate"]
			delete(rolling.Properties, "partition")
			strategy.Properties["rollingUpdate"] = rolling
			spec.Properties["updateStrategy"] = strategy
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		}
	}
}

func TestCustomKind_multiBatch_heldAtRunTimeAndReleasedByOrdinal(t *testing.T) {
	scenarioMultiBatch(t, gameServerSets, 4, 4)
}

func TestCustomKind_rollbackMidRelease_completesAtOnce(t *testing.T) {
	scenarioRollback(t, gameServerSets, 4, 4)
}

func TestCustomKind_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	scenarioDeleted(t, gameServerSets, 4, 4)
}

// Given a StatefulSet-like custom kind (its CRD unlabelled, as OpenKruise
// needs no CRD label) and an object of it without the
// rollouts.kruise.io/workload-type: statefulset label
// When a Rollout names it and the object changes
// Then the Rollout is Disabled with a message naming the label and the
// update is not held; once the object is labelled, its next update is
// released in batches; without the label again, the Rollout is Disabled.
func TestCustomKind_workloadLabel_decidesWhetherItIsReleased(t *testing.T) {
	k := customKind("unlabelled.games.example.com", "MatchServerSet", "matchserversets")
	installCRD(t, "testdata/partition/"+gameServerSetCRD, renamed(k, false, true))
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", 2, v1, 2)
	setWorkloadLabel(t, k, ns, "app", nil)

	createRolloutAnyPhase(t, rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	disabled := func(what string) {
		t.Helper()
		waitRollout(t, ns, "app", what, func(r *rolloutsv1beta1.Rollout) bool {
			return r.Status.Phase == rolloutsv1beta1.RolloutPhaseDisabled &&
				strings.Contains(r.Status.Message, "not labelled rollouts.kruise.io/workload-type=statefulset")
		})
	}
	disabled("Disabled naming the missing label")
	k.rolloutCreated(t)
	u := setWorkloadImage(t, k, ns, "app", v2)
	if _, held := u.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation]; held {
		t.Fatalf("update of an unlabelled object was held: %v", u.GetAnnotations())
	}
	waitPods(t, ns, "app", map[string]int{v2: 2})

	value := rolloutsv1beta1.WorkloadTypeStatefulSet
	setWorkloadLabel(t, k, ns, "app", &value)
	waitRollout(t, ns, "app", "Healthy once labelled", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
	assertHeldAt(t, k, setWorkloadImage(t, k, ns, "app", v3), k.hold)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	waitCompleted(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v3: 2})

	setWorkloadLabel(t, k, ns, "app", nil)
	disabled("Disabled again without the label")
}

// setWorkloadLabel sets (or with nil removes) the workload-type label of a
// workload object.
func setWorkloadLabel(t *testing.T, k partitionKind, ns, name string, value *string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{rolloutsv1beta1.WorkloadTypeLabel: value}}})
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, b)); err != nil {
		t.Fatalf("labelling %s: %v", name, err)
	}
}

// createRolloutAnyPhase creates a Rollout without waiting for Healthy.
func createRolloutAnyPhase(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), ro); err != nil {
		t.Fatalf("creating rollout: %v", err)
	}
}

// Given a custom kind labelled StatefulSet-like whose schema has no
// spec.updateStrategy.rollingUpdate.partition
// When a Rollout is created for it
// Then it is rejected with a message naming the missing field.
func TestCustomKind_noPartitionInSchema_rejectedNamingTheField(t *testing.T) {
	k := customKind("nopartition.games.example.com", "LobbySet", "lobbysets")
	installCRD(t, "testdata/partition/"+gameServerSetCRD, renamed(k, true, false))
	ns := newNamespace(t)
	err := suite.c.Create(ctxFor(t), rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	if err == nil || !strings.Contains(err.Error(), "has no spec.updateStrategy.rollingUpdate.partition") {
		t.Fatalf("creating a Rollout for a kind without a partition: %v", err)
	}
}

func TestCustomKind_restorePatchAppliedByHand_completesWhenSluiceReturns(t *testing.T) {
	scenarioRestoredByHand(t, gameServerSets, 4, 4)
}
