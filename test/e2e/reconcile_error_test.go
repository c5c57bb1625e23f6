package e2e

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment that an admission policy of the cluster freezes (every
// update refused, sluice's too)
// When a Rollout of it is created
// Then the Rollout says that its reconcile fails, in which phase and why
// (condition ReconcileError, naming the policy's message), and does not
// claim to have observed its generation; once the policy is gone, the
// condition is removed and the generation observed.
func TestRollout_phaseFails_errorInStatusAndGenerationUnobserved(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	unfreeze := freezeDeployment(t, ns, "web")

	createRolloutAnyPhase(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	failing := waitRollout(t, ns, "web", "ReconcileError naming the refusal", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionReconcileError)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "Observe" && strings.Contains(c.Message, "frozen by the cluster's policy")
	})
	if failing.Status.ObservedGeneration == failing.Generation {
		t.Fatalf("observedGeneration %d while the reconcile fails, want it below generation %d", failing.Status.ObservedGeneration, failing.Generation)
	}

	unfreeze()
	waitRollout(t, ns, "web", "the error gone and the generation observed", func(r *rolloutsv1beta1.Rollout) bool {
		return condition(r, rolloutsv1beta1.RolloutConditionReconcileError) == nil && r.Status.ObservedGeneration == r.Generation &&
			r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
}

// freezeDeployment makes the API server refuse every update of the
// Deployment ns/name, through a ValidatingAdmissionPolicy, and returns what
// lifts it. It returns once an update is refused.
func freezeDeployment(t *testing.T, ns, name string) func() {
	t.Helper()
	ctx := ctxFor(t)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "the-frozen-one", Expression: "object.metadata.name == '" + name + "'"}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "false", Message: "frozen by the cluster's policy"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := suite.c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	lift := func() {
		for _, obj := range []client.Object{binding, policy} {
			if err := client.IgnoreNotFound(suite.c.Delete(ctxFor(t), obj)); err != nil {
				t.Errorf("deleting %s: %v", obj.GetName(), err)
			}
		}
	}
	t.Cleanup(lift)
	eventually(t, "the policy refusing updates", func() (bool, string) {
		d := getDeployment(t, ns, name)
		d.Annotations = map[string]string{"probe": "1"}
		err := suite.c.Update(ctx, d, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "frozen"), "update allowed"
	})
	return lift
}
