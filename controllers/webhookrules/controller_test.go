package webhookrules

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
