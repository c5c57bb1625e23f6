package e2e

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// nativeStatefulSet is an apps/v1 StatefulSet, released by Kubernetes' own
// StatefulSet controller (in kube-controller-manager) through its
// partition.
var nativeStatefulSet = partitionKind{
	gvk:       schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	partition: []string{"spec", "updateStrategy", "rollingUpdate", "partition"},
	hold:      int64(32767),
	ordinals:  true,
	spec: func(name string, replicas int32, image string) map[string]any {
		return map[string]any{
			"replicas":    int64(replicas),
			"serviceName": name,
			"selector":    selectorOf(name),
			"template":    podTemplate(name, image),
			"updateStrategy": map[string]any{
				"type":          "RollingUpdate",
				"rollingUpdate": map[string]any{"partition": int64(0), "maxUnavailable": int64(1)},
			},
		}
	},
}

func TestStatefulSet_multiBatch_releasedByOrdinalAndRestored(t *testing.T) {
	scenarioMultiBatch(t, nativeStatefulSet, 4, 4)
}

func TestStatefulSet_rollbackMidRelease_completesAtOnce(t *testing.T) {
	scenarioRollback(t, nativeStatefulSet, 4, 4)
}

func TestStatefulSet_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	scenarioDeleted(t, nativeStatefulSet, 4, 4)
}

// Given a StatefulSet with the OnDelete update strategy
// When a Rollout is created for it and its image changes
// Then the Rollout reports it cannot release it, naming the field, and the
// update is not held.
func TestStatefulSet_onDelete_reportedAndNotHeld(t *testing.T) {
	k := nativeStatefulSet
	k.spec = func(name string, replicas int32, image string) map[string]any {
		s := nativeStatefulSet.spec(name, replicas, image)
		s["updateStrategy"] = map[string]any{"type": "OnDelete"}
		return s
	}
	ns := newNamespace(t)
	createWorkload(t, k, ns, "app", 2, v1, 2)
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	waitRollout(t, ns, "app", "Supported=False naming the update strategy", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "False" && strings.Contains(c.Message, "spec.updateStrategy.type") && strings.Contains(c.Message, "OnDelete")
	})
	u := setWorkloadImage(t, k, ns, "app", v2)
	if _, held := u.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation]; held {
		t.Fatalf("an OnDelete StatefulSet was held: %v", u.GetAnnotations())
	}
	if p, ok := partitionOf(k, u); ok {
		t.Fatalf("partition %v set on an OnDelete StatefulSet", p)
	}
}

func TestStatefulSet_restorePatchAppliedByHand_completesWhenSluiceReturns(t *testing.T) {
	scenarioRestoredByHand(t, nativeStatefulSet, 4, 4)
}

func TestStatefulSet_newRevisionMidRelease_restartsAtStepOne(t *testing.T) {
	scenarioNewRevision(t, nativeStatefulSet, 4, 4)
}
