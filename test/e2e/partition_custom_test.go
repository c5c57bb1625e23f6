package e2e

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/fakeoperators"
)

const gameServerSetCRD = "games.example.com_gameserversets.yaml"

// gameServerSets is a StatefulSet-like custom kind (CRD in testdata,
// labelled rollouts.kruise.io/workload-type: statefulset), run by a test
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

// Given a custom kind whose CRD is not labelled
// rollouts.kruise.io/workload-type: statefulset
// When a Rollout is created for it
// Then it is rejected, naming the label; once the CRD is labelled it is
// accepted and updates are held; when the label is removed again the
// Rollout reports it cannot release the kind, naming the label, and
// updates pass unheld.
func TestCustomKind_crdLabel_decidesWhetherTheKindIsReleased(t *testing.T) {
	k := customKind("unlabelled.games.example.com", "MatchServerSet", "matchserversets")
	file := "testdata/partition/" + gameServerSetCRD
	installCRD(t, file, renamed(k, false, true))
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", 2, v1, 2)

	err := suite.c.Create(ctxFor(t), rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	if err == nil || !strings.Contains(err.Error(), "spec.workloadRef.kind") || !strings.Contains(err.Error(), "not labelled rollouts.kruise.io/workload-type=statefulset") {
		t.Fatalf("creating a Rollout for a kind whose CRD is not labelled: %v", err)
	}

	installCRD(t, file, renamed(k, true, true))
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	k.rolloutCreated(t)
	assertHeldAt(t, k, setWorkloadImage(t, k, ns, "app", v2), k.hold)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	waitCompleted(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v2: 2})

	installCRD(t, file, renamed(k, false, true))
	waitRollout(t, ns, "app", "Supported=False naming the label", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "False" && strings.Contains(c.Message, "not labelled rollouts.kruise.io/workload-type=statefulset")
	})
	waitWorkloadRule(t, k.resource.Group, k.resource.Resource, false)
	u := setWorkloadImage(t, k, ns, "app", v3)
	if _, held := u.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation]; held {
		t.Fatalf("update of a kind whose CRD lost its label was held: %v", u.GetAnnotations())
	}
	waitPods(t, ns, "app", map[string]int{v3: 2})
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
