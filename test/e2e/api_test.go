package e2e

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given Rollout manifests written for OpenKruise Rollouts v1beta1
// When they are applied unchanged, with strict field validation
// Then the API server accepts and stores every field.
func TestCRD_acceptsOpenKruiseManifestsUnchanged(t *testing.T) {
	ns := newNamespace(t)
	for _, file := range []string{"testdata/openkruise-canary.yaml", "testdata/openkruise-bluegreen.yaml"} {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(raw, &u.Object); err != nil {
				t.Fatal(err)
			}
			u.SetNamespace(ns)
			err = suite.c.Patch(ctxFor(t), u, client.Apply, client.FieldOwner("kubectl"), //nolint:staticcheck // applying a manifest as kubectl does
				client.ForceOwnership, &client.PatchOptions{Raw: &metav1.PatchOptions{FieldValidation: "Strict"}})
			if err != nil {
				t.Fatalf("applying %s: %v", file, err)
			}
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(u.GroupVersionKind())
			if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: u.GetName()}, stored); err != nil {
				t.Fatal(err)
			}
			want, _, _ := unstructured.NestedMap(u.Object, "spec")
			got, _, _ := unstructured.NestedMap(stored.Object, "spec")
			wantJSON, _ := yaml.Marshal(want)
			gotJSON, _ := yaml.Marshal(got)
			if string(wantJSON) != string(gotJSON) {
				t.Fatalf("stored spec differs from the manifest:\nwant:\n%s\ngot:\n%s", wantJSON, gotJSON)
			}
		})
	}

	// What this version does not implement is reported, not ignored: an
	// nginx Ingress cannot modify request headers; the rest is supported.
	waitRollout(t, ns, "rollouts-demo", "Supported=False naming the requestHeaderModifier nginx cannot apply", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "False" && strings.Contains(c.Message, "spec.strategy.canary.steps[1]") &&
			strings.Contains(c.Message, "requestHeaderModifier") && !strings.Contains(c.Message, "steps[0]")
	})
	waitRollout(t, ns, "rollouts-bluegreen", "Supported=True", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "True"
	})
}

// Given an enabled Rollout of a Deployment
// When invalid Rollouts or a second enabled Rollout for the same Deployment
// are created
// Then each is rejected with a message that names the offending field.
func TestRollout_invalid_rejectedNamingTheField(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))

	negative := newRollout(ns, "negative", step("1", nil))
	negative.Spec.Strategy.Canary.Steps[0].Replicas = ptr(intstr.FromInt32(-2))
	negative.Spec.WorkloadRef.Name = "other"
	shrinking := newRollout(ns, "shrinking", step("3", nil), step("2", nil), step("100%", nil))
	shrinking.Spec.WorkloadRef.Name = "other"
	shrinkingPercent := newRollout(ns, "shrinking-percent", step("50%", nil), step("20%", nil))
	shrinkingPercent.Spec.WorkloadRef.Name = "other"
	noName := newRollout(ns, "no-name", step("1", nil))
	noName.Spec.WorkloadRef.Name = ""
	unknownKind := newRollout(ns, "unknown-kind", step("1", nil))
	unknownKind.Spec.WorkloadRef = rolloutsv1beta1.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Name: "migrate"}
	noSteps := newRollout(ns, "no-steps")
	noSteps.Spec.WorkloadRef.Name = "other"
	second := newRollout(ns, "second", step("50%", nil))
	second.Spec.WorkloadRef.Name = "web"
	badApproval := newRollout(ns, "bad-approval", step("1", nil))
	badApproval.Spec.WorkloadRef.Name = "other"
	badApproval.Annotations = map[string]string{rolloutsv1beta1.ApproveAnnotation: "yes please"}

	tests := []struct {
		name string
		ro   *rolloutsv1beta1.Rollout
		want []string
	}{
		{"negative replicas", negative, []string{"spec.strategy.canary.steps[0].replicas"}},
		{"a step smaller than the one before", shrinking, []string{"spec.strategy.canary.steps[1].replicas", "must not be smaller than steps[0].replicas"}},
		{"a percentage smaller than the one before", shrinkingPercent, []string{"spec.strategy.canary.steps[1].replicas"}},
		{"a workloadRef without a name", noName, []string{"spec.workloadRef.name"}},
		{"an unknown workload kind", unknownKind, []string{"spec.workloadRef.kind", "batch/v1/Job"}},
		{"no steps", noSteps, []string{"spec.strategy.canary.steps"}},
		{"a second enabled Rollout for the same workload", second, []string{"spec.workloadRef", `already released by Rollout "web"`}},
		{"an approval that cannot be read", badApproval, []string{"metadata.annotations[sluice.dev/approve]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := suite.c.Create(ctxFor(t), tt.ro)
			if err == nil {
				t.Fatalf("created; want rejected naming %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	// A disabled second Rollout is allowed: it does not compete.
	disabled := newRollout(ns, "standby", step("50%", nil))
	disabled.Spec.Disabled = true
	if err := suite.c.Create(ctxFor(t), disabled); err != nil {
		t.Fatalf("a disabled second Rollout was rejected: %v", err)
	}
}
