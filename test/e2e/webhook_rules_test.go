package e2e

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/webhookrules"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// Given sluice's registered webhook configuration (which, installed, Helm
// owns)
// When a Rollout names a StatefulSet-like custom kind, and is deleted again
// Then the rule for the kind is written into a configuration of sluice's
// own, labelled and owned by the registered one, with the workload
// webhook's client settings; the registered configuration is never
// written (its workload rules stay the built-in ones, no field manager of
// the rules controller on it); and once no Rollout names the kind, sluice's
// own configuration is removed.
func TestWebhookRules_customKind_inAConfigurationOfSluicesOwn(t *testing.T) {
	k := customKind("rules.games.example.com", "ArenaSet", "arenasets")
	installCRD(t, "testdata/partition/"+gameServerSetCRD, renamed(k, true, true))
	ns := newNamespace(t)
	ro := rolloutFor(k, ns, "app", step("1", nil), step("100%", nil))
	createRolloutAnyPhase(t, ro)
	k.rolloutCreated(t)

	registered := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: "sluice-e2e"}, registered); err != nil {
		t.Fatal(err)
	}
	own := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: webhookrules.OwnConfigName("sluice-e2e")}, own); err != nil {
		t.Fatal(err)
	}
	if own.Labels["app.kubernetes.io/managed-by"] != "sluice" {
		t.Errorf("sluice's own configuration is labelled %v, want app.kubernetes.io/managed-by=sluice", own.Labels)
	}
	if refs := own.OwnerReferences; len(refs) != 1 || refs[0].Kind != "MutatingWebhookConfiguration" || refs[0].UID != registered.UID {
		t.Errorf("owner references %+v, want the registered configuration %s", refs, registered.UID)
	}
	var workload *admissionregistrationv1.MutatingWebhook
	for i := range registered.Webhooks {
		if registered.Webhooks[i].Name == webhookrules.WorkloadWebhook {
			workload = &registered.Webhooks[i]
		}
	}
	if workload == nil || !equality.Semantic.DeepEqual(workload.Rules, registration.WorkloadRules()) {
		t.Errorf("the registered workload webhook's rules changed: %s", mustJSON(workload))
	}
	for _, mf := range registered.ManagedFields {
		if mf.Manager != rolloutsv1beta1.FieldManager {
			t.Errorf("the registered configuration was written by %s (%s)", mf.Manager, mf.Operation)
		}
	}
	if len(own.Webhooks) != 1 || !equality.Semantic.DeepEqual(own.Webhooks[0].ClientConfig, workload.ClientConfig) ||
		!equality.Semantic.DeepEqual(own.Webhooks[0].FailurePolicy, workload.FailurePolicy) ||
		!equality.Semantic.DeepEqual(own.Webhooks[0].ObjectSelector, workload.ObjectSelector) {
		t.Errorf("sluice's own webhook %s does not reach the workload webhook as the registered one does", mustJSON(own.Webhooks))
	}

	if err := suite.c.Delete(ctxFor(t), getRollout(t, ns, "app")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "sluice's own configuration removed", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: webhookrules.OwnConfigName("sluice-e2e")}, &admissionregistrationv1.MutatingWebhookConfiguration{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
