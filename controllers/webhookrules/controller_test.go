package webhookrules

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestRulesFor(t *testing.T) {
	got := rulesFor(map[schema.GroupResource]bool{
		{Group: "games.example.com", Resource: "gameserversets"}: true,
		{Group: "db.example.com", Resource: "clusters"}:          true,
	})
	if len(got) != 2 {
		t.Fatalf("rulesFor() = %d rules, want 2", len(got))
	}
	for i, want := range []schema.GroupResource{{Group: "db.example.com", Resource: "clusters"}, {Group: "games.example.com", Resource: "gameserversets"}} {
		r := got[i]
		if len(r.APIGroups) != 1 || r.APIGroups[0] != want.Group || len(r.Resources) != 1 || r.Resources[0] != want.Resource {
			t.Errorf("rule %d = %+v, want %s", i, r.Rule, want)
		}
		if len(r.Operations) != 1 || r.Operations[0] != admissionregistrationv1.Update || r.APIVersions[0] != "*" ||
			r.Scope == nil || *r.Scope != admissionregistrationv1.NamespacedScope {
			t.Errorf("rule %d = %+v, want UPDATE of every version, namespaced", i, r)
		}
	}
	if len(rulesFor(nil)) != 0 {
		t.Error("rulesFor(nil) is not empty")
	}
}

func TestOwnConfig_mirrorsTheRegisteredWorkloadWebhook(t *testing.T) {
	url := "https://127.0.0.1:9443/mutate-workload"
	fail := admissionregistrationv1.Fail
	registered := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "sluice", UID: "u-1"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "mrollout.sluice.dev"},
			{Name: WorkloadWebhook, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: []byte("ca")},
				FailurePolicy: &fail, Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"UPDATE"}}}},
		},
	}
	rules := rulesFor(map[schema.GroupResource]bool{{Group: "games.example.com", Resource: "gameserversets"}: true})
	got, ok := ownConfig(registered, rules)
	if !ok {
		t.Fatal("no configuration built")
	}
	if got.Name != "sluice-custom-kinds" || got.Labels[managedByLabel] != "sluice" {
		t.Errorf("name %s labels %v", got.Name, got.Labels)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != "u-1" || got.OwnerReferences[0].Name != "sluice" {
		t.Errorf("owner references %+v", got.OwnerReferences)
	}
	if len(got.Webhooks) != 1 || got.Webhooks[0].Name != CustomWorkloadWebhook || *got.Webhooks[0].ClientConfig.URL != url ||
		*got.Webhooks[0].FailurePolicy != fail || len(got.Webhooks[0].Rules) != 1 || got.Webhooks[0].Rules[0].Resources[0] != "gameserversets" {
		t.Errorf("webhooks %+v", got.Webhooks)
	}
	if len(registered.Webhooks[1].Rules[0].Resources) != 0 {
		t.Error("the registered configuration was changed")
	}
	if _, ok := ownConfig(&admissionregistrationv1.MutatingWebhookConfiguration{}, rules); ok {
		t.Error("built a configuration without a workload webhook to mirror")
	}
}

func TestWorkloadKindChanged_passesOnlyWhatChangesTheRules(t *testing.T) {
	ro := func(apiVersion, kind string, step int32) *rolloutsv1beta1.Rollout {
		r := &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: apiVersion, Kind: kind, Name: "web"}}}
		r.Status.CurrentStepIndex = step
		return r
	}
	p := workloadKindChanged()
	for _, tc := range []struct {
		name       string
		old, new   *rolloutsv1beta1.Rollout
		reconciles bool
	}{
		{"a status update of a release", ro("apps/v1", "Deployment", 1), ro("apps/v1", "Deployment", 2), false},
		{"another kind", ro("apps/v1", "Deployment", 1), ro("example.io/v1", "Database", 1), true},
		{"another version of the kind", ro("example.io/v1", "Database", 1), ro("example.io/v2", "Database", 1), true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.reconciles {
			t.Errorf("%s: reconciles %v, want %v", tc.name, got, tc.reconciles)
		}
	}
	if !p.Create(event.CreateEvent{Object: ro("apps/v1", "Deployment", 0)}) || !p.Delete(event.DeleteEvent{Object: ro("apps/v1", "Deployment", 0)}) {
		t.Error("a Rollout created or deleted must recompute the rules")
	}
}
