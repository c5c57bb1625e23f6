package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/env"
)

// applyManifest applies a manifest file unchanged but for its namespace, as
// kubectl apply --server-side does, with strict field validation, and
// returns what was applied.
func applyManifest(t *testing.T, ns, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	applied := u.DeepCopy()
	err = suite.c.Patch(ctxFor(t), u, client.Apply, client.FieldOwner("kubectl"), //nolint:staticcheck // applying a manifest as kubectl does
		client.ForceOwnership, &client.PatchOptions{Raw: &metav1.PatchOptions{FieldValidation: "Strict"}})
	if err != nil {
		t.Fatalf("applying %s: %v", file, err)
	}
	return applied
}

func getAlpha(t *testing.T, ns, name string) *rolloutsv1alpha1.Rollout {
	t.Helper()
	ro := &rolloutsv1alpha1.Rollout{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		t.Fatalf("reading rollout as v1alpha1: %v", err)
	}
	return ro
}

// waitAlpha waits until cond holds for the Rollout read as v1alpha1.
func waitAlpha(t *testing.T, ns, name, what string, cond func(*rolloutsv1alpha1.Rollout) bool) *rolloutsv1alpha1.Rollout {
	t.Helper()
	var ro *rolloutsv1alpha1.Rollout
	eventually(t, "v1alpha1 rollout "+what, func() (bool, string) {
		ro = getAlpha(t, ns, name)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

func waitAlphaStep(t *testing.T, ns, name string, index int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1alpha1.Rollout {
	t.Helper()
	return waitAlpha(t, ns, name, fmt.Sprintf("step %d %s", index, state), func(ro *rolloutsv1alpha1.Rollout) bool {
		cs := ro.Status.CanaryStatus
		return cs != nil && cs.CurrentStepIndex == index && cs.CurrentStepState == state
	})
}

// approveV1alpha1 does what kubectl-kruise rollout approve does on a
// v1alpha1 Rollout: a merge patch of rollouts.v1alpha1 status.
func approveV1alpha1(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	if err := suite.c.Status().Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		t.Fatalf("approving through v1alpha1 status: %v", err)
	}
}

// updateAlpha reads the Rollout as v1alpha1, changes it and writes the
// whole object back (kubectl edit), again when the controller wrote first.
func updateAlpha(t *testing.T, ns, name string, change func(*rolloutsv1alpha1.Rollout)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ro := getAlpha(t, ns, name)
		change(ro)
		return suite.c.Update(ctxFor(t), ro)
	})
	if err != nil {
		t.Fatalf("writing back through v1alpha1: %v", err)
	}
}

// getTable lists the namespace's Rollouts in version as kubectl get does:
// as a Table, with the CRD's printer columns.
func getTable(t *testing.T, ns, version string) *metav1.Table {
	t.Helper()
	raw, err := suite.kube.Discovery().RESTClient().Get().
		AbsPath("/apis/rollouts.kruise.io", version, "namespaces", ns, "rollouts").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctxFor(t))
	if err != nil {
		t.Fatalf("kubectl get rollouts.%s.rollouts.kruise.io: %v", version, err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil {
		t.Fatal(err)
	}
	return table
}

// assertColumns checks the printed row of the one Rollout in a Table.
func assertColumns(t *testing.T, table *metav1.Table, want ...any) {
	t.Helper()
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "Name STATUS CANARY_STEP CANARY_STATE MESSAGE AGE" {
		t.Fatalf("columns %q", got)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	for i, w := range want {
		if fmt.Sprint(cells[i]) != fmt.Sprint(w) {
			t.Fatalf("row %v: column %s is %v, want %v", cells, names[i], cells[i], w)
		}
	}
}

// specOf is the spec of an object as JSON, to compare a manifest with what
// reads back.
func specOf(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(m["spec"])
	return string(spec)
}

// Given a Deployment of 10 pods and the multi-batch v1alpha1 Rollout of the
// Kruise Rollouts walkthrough (rolling-style partition, steps 1 / 50% /
// 100%), applied unchanged
// When the image changes and each paused step is approved the way
// kubectl-kruise approves a v1alpha1 Rollout
// Then the Deployment is released in place, batch by batch: 1, then 5, then
// all 10 new pods; the Rollout reads the same through v1alpha1 and v1beta1
// at every step, and `kubectl get rollouts.v1alpha1.rollouts.kruise.io`
// prints its step and state.
func TestV1alpha1_seedPartitionExample_releasesInBatches(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "workload-demo", 10, v1)
	manifest := applyManifest(t, ns, "testdata/v1alpha1/rollouts-demo.yaml")

	ro := waitRollout(t, ns, "rollouts-demo", "Healthy", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
	if c := ro.Spec.Strategy.Canary; ro.Spec.WorkloadRef.Name != "workload-demo" || c == nil || c.EnableExtraWorkloadForCanary || len(c.Steps) != 3 {
		t.Fatalf("stored as v1beta1: %s", specOf(t, ro))
	}
	alpha := getAlpha(t, ns, "rollouts-demo")
	// Read back as written; only the unset pauses show as {}.
	want := strings.NewReplacer(`{"replicas":1}`, `{"pause":{},"replicas":1}`, `{"replicas":"50%"}`, `{"pause":{},"replicas":"50%"}`,
		`{"replicas":"100%"}`, `{"pause":{},"replicas":"100%"}`).Replace(specOf(t, manifest.Object))
	if got := specOf(t, alpha); !sameJSON(got, want) {
		t.Fatalf("read back as v1alpha1:\n%s\nwant:\n%s", got, want)
	}
	assertColumns(t, getTable(t, ns, "v1alpha1"), "rollouts-demo", "Healthy", 3, "Completed")

	setImage(t, ns, "workload-demo", v2)
	alpha = waitAlphaStep(t, ns, "rollouts-demo", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "workload-demo"); got[v2] != 1 || got[v1] != 9 {
		t.Fatalf("step 1: pods by image %v, want 1 new and 9 old", got)
	}
	assertHeld(t, ns, "workload-demo")
	assertSameThroughBothVersions(t, ns, "rollouts-demo")
	assertColumns(t, getTable(t, ns, "v1alpha1"), "rollouts-demo", "Progressing", 1, "StepPaused", alpha.Status.Message)
	assertColumns(t, getTable(t, ns, "v1beta1"), "rollouts-demo", "Progressing", 1, "StepPaused", alpha.Status.Message)

	approveV1alpha1(t, ns, "rollouts-demo")
	waitAlphaStep(t, ns, "rollouts-demo", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "workload-demo"); got[v2] != 5 || got[v1] != 5 {
		t.Fatalf("step 2: pods by image %v, want 5 new and 5 old", got)
	}
	assertHeld(t, ns, "workload-demo")
	assertSameThroughBothVersions(t, ns, "rollouts-demo")

	// Installing the CRDs again (as make run and the test setup do) keeps
	// the conversion the manager set: v1alpha1 still works.
	if err := env.InstallCRDs(ctxFor(t), suite.cfg); err != nil {
		t.Fatal(err)
	}
	approveV1alpha1(t, ns, "rollouts-demo")
	alpha = waitAlpha(t, ns, "rollouts-demo", "completed", func(r *rolloutsv1alpha1.Rollout) bool {
		cs := r.Status.CanaryStatus
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && cs != nil && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "workload-demo", v2)
	assertRestored(t, ns, "workload-demo")
	if alpha.Status.CanaryStatus.CurrentStepIndex != 3 {
		t.Fatalf("completed at step %d, want 3", alpha.Status.CanaryStatus.CurrentStepIndex)
	}
	assertSameThroughBothVersions(t, ns, "rollouts-demo")
	assertColumns(t, getTable(t, ns, "v1alpha1"), "rollouts-demo", "Healthy", 3, "Completed")
	// Both approvals were recorded, with the client that wrote them.
	records, err := approval.Records(alpha.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || len(records) != 2 || records[0].Via != "status" || records[0].By != "kubectl-kruise" || records[1].Step != 2 {
		t.Fatalf("approval records %+v, %v", records, err)
	}
}

// assertSameThroughBothVersions reads the Rollout as v1alpha1 and v1beta1
// and checks that they agree on every field both have.
func assertSameThroughBothVersions(t *testing.T, ns, name string) {
	t.Helper()
	// Two reads race the controller: retry until both see one version.
	eventually(t, "the same rollout through both versions", func() (bool, string) {
		a, b := getAlpha(t, ns, name), getRollout(t, ns, name)
		if a.ResourceVersion != b.ResourceVersion {
			return false, "resource versions differ"
		}
		cs, bs := a.Status.CanaryStatus, b.Status.CanaryStatus
		var diffs []string
		check := func(what string, x, y any) {
			if fmt.Sprint(x) != fmt.Sprint(y) {
				diffs = append(diffs, fmt.Sprintf("%s: v1alpha1 %v, v1beta1 %v", what, x, y))
			}
		}
		check("workloadRef", *a.Spec.ObjectRef.WorkloadRef, b.Spec.WorkloadRef)
		check("steps", len(a.Spec.Strategy.Canary.Steps), len(b.Spec.Strategy.Canary.Steps))
		for i, st := range a.Spec.Strategy.Canary.Steps {
			check(fmt.Sprintf("steps[%d].replicas", i), st.Replicas, b.Spec.Strategy.Canary.Steps[i].Replicas)
		}
		check("rolling style", a.Annotations[rolloutsv1beta1.RollingStyleAnnotation], "partition")
		check("enableExtraWorkloadForCanary", b.Spec.Strategy.Canary.EnableExtraWorkloadForCanary, false)
		check("phase", a.Status.Phase, b.Status.Phase)
		check("message", a.Status.Message, b.Status.Message)
		check("observedGeneration", a.Status.ObservedGeneration, b.Status.ObservedGeneration)
		check("conditions", len(a.Status.Conditions), len(b.Status.Conditions))
		if cs == nil || bs == nil {
			return false, fmt.Sprintf("canaryStatus v1alpha1 %v v1beta1 %v", cs, bs)
		}
		check("currentStepIndex", cs.CurrentStepIndex, bs.CurrentStepIndex)
		check("mirror currentStepIndex", cs.CurrentStepIndex, b.Status.CurrentStepIndex)
		check("currentStepState", cs.CurrentStepState, bs.CurrentStepState)
		check("mirror currentStepState", cs.CurrentStepState, b.Status.CurrentStepState)
		check("nextStepIndex", cs.NextStepIndex, bs.NextStepIndex)
		check("canaryRevision", cs.CanaryRevision, bs.CanaryRevision)
		check("stableRevision", cs.StableRevision, bs.StableRevision)
		check("podTemplateHash", cs.PodTemplateHash, bs.PodTemplateHash)
		check("canaryReplicas", cs.CanaryReplicas, bs.CanaryReplicas)
		check("canaryReadyReplicas", cs.CanaryReadyReplicas, bs.CanaryReadyReplicas)
		check("observedRolloutID", cs.ObservedRolloutID, bs.ObservedRolloutID)
		check("rolloutHash", cs.RolloutHash, bs.RolloutHash)
		check("lastUpdateTime", cs.LastUpdateTime, bs.LastUpdateTime)
		for _, key := range []string{rolloutsv1alpha1.V1beta1FieldsAnnotation, rolloutsv1alpha1.V1alpha1FieldsAnnotation} {
			if _, ok := a.Annotations[key]; ok {
				diffs = append(diffs, "v1alpha1 carries "+key)
			}
		}
		if len(diffs) > 0 {
			t.Fatalf("v1alpha1 and v1beta1 disagree: %s", strings.Join(diffs, "; "))
		}
		return true, ""
	})
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// Given the canary v1alpha1 Rollout of the Kruise Rollouts walkthrough
// (rolling-style canary, weights, a step without replicas, an nginx
// Ingress), applied unchanged
// When it is read back through both versions, and written back through
// v1alpha1 with a new label
// Then it is stored as a v1beta1 canary with traffic and replicas, reads
// back in v1alpha1 exactly as written, loses nothing in the write, and
// reports itself Supported (its nginx routing is implemented).
func TestV1alpha1_seedCanaryExample_storedAndReadBackUnchanged(t *testing.T) {
	ns := newNamespace(t)
	manifest := applyManifest(t, ns, "testdata/v1alpha1/rollouts-canary-demo.yaml")

	b := getRollout(t, ns, "rollouts-canary-demo")
	c := b.Spec.Strategy.Canary
	if c == nil || !c.EnableExtraWorkloadForCanary || len(c.Steps) != 5 || c.Steps[1].Traffic == nil || *c.Steps[1].Traffic != "40%" ||
		c.Steps[1].Replicas.String() != "40%" || len(c.TrafficRoutings) != 1 || c.TrafficRoutings[0].Ingress.Name != "echoserver" {
		t.Fatalf("stored as v1beta1: %s", specOf(t, b))
	}
	if got := getAlpha(t, ns, "rollouts-canary-demo"); !sameJSON(specOf(t, got), specOf(t, manifest.Object)) ||
		got.Annotations[rolloutsv1beta1.RollingStyleAnnotation] != "canary" {
		t.Fatalf("read back as v1alpha1:\n%s\nwant:\n%s", specOf(t, got), specOf(t, manifest.Object))
	}

	updateAlpha(t, ns, "rollouts-canary-demo", func(a *rolloutsv1alpha1.Rollout) {
		a.Labels = map[string]string{"team": "shop"}
	})
	after := getRollout(t, ns, "rollouts-canary-demo")
	if after.Labels["team"] != "shop" || specOf(t, after) != specOf(t, b) {
		t.Fatalf("after a v1alpha1 write, v1beta1 spec:\n%s\nwas:\n%s", specOf(t, after), specOf(t, b))
	}
	waitRollout(t, ns, "rollouts-canary-demo", "Supported=True (the nginx traffic routing is implemented)", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "True"
	})
}

// Given a blue-green Rollout written as v1beta1, which v1alpha1 cannot
// express
// When a client reads it as v1alpha1, changes a label and writes it back
// Then the blue-green strategy is kept as it was.
func TestV1alpha1_blueGreenSurvivesAV1alpha1Write(t *testing.T) {
	ns := newNamespace(t)
	applyManifest(t, ns, "testdata/openkruise-bluegreen.yaml")
	before := getRollout(t, ns, "rollouts-bluegreen")

	if a := getAlpha(t, ns, "rollouts-bluegreen"); a.Spec.Strategy.Canary != nil || a.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation] == "" {
		t.Fatalf("v1alpha1 form: spec %s annotations %v", specOf(t, a), a.Annotations)
	}
	updateAlpha(t, ns, "rollouts-bluegreen", func(a *rolloutsv1alpha1.Rollout) {
		a.Labels = map[string]string{"team": "shop"}
	})
	after := getRollout(t, ns, "rollouts-bluegreen")
	if after.Labels["team"] != "shop" || specOf(t, after) != specOf(t, before) {
		t.Fatalf("after a v1alpha1 write, v1beta1 spec:\n%s\nwas:\n%s", specOf(t, after), specOf(t, before))
	}
	if _, ok := after.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation]; ok {
		t.Fatalf("the stored form carries %s", rolloutsv1alpha1.V1beta1FieldsAnnotation)
	}
}

// Given v1alpha1 Rollouts that break OpenKruise's rules
// When they are created
// Then each is rejected with a message naming the field as written in
// v1alpha1.
func TestV1alpha1_invalid_rejectedNamingV1alpha1Fields(t *testing.T) {
	ns := newNamespace(t)
	base := func(name string) *rolloutsv1alpha1.Rollout {
		return &rolloutsv1alpha1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: rolloutsv1alpha1.RolloutSpec{
				ObjectRef: rolloutsv1alpha1.ObjectRef{WorkloadRef: &rolloutsv1alpha1.WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
				Strategy: rolloutsv1alpha1.RolloutStrategy{Canary: &rolloutsv1alpha1.CanaryStrategy{Steps: []rolloutsv1alpha1.CanaryStep{
					{TrafficRoutingStrategy: rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](40)}},
				}}},
			},
		}
	}
	style := base("style")
	style.Annotations = map[string]string{rolloutsv1beta1.RollingStyleAnnotation: "blue-green"}
	shrinking := base("shrinking")
	shrinking.Spec.Strategy.Canary.Steps = append(shrinking.Spec.Strategy.Canary.Steps,
		rolloutsv1alpha1.CanaryStep{TrafficRoutingStrategy: rolloutsv1alpha1.TrafficRoutingStrategy{Weight: ptr[int32](20)}})
	zero := base("zero")
	zero.Spec.Strategy.Canary.Steps[0].Weight = ptr[int32](0)
	noWeight := base("no-weight")
	noWeight.Spec.Strategy.Canary.Steps[0].Weight = nil
	unknownKind := base("unknown-kind")
	unknownKind.Spec.ObjectRef.WorkloadRef.Kind = "Job"
	unknownKind.Spec.ObjectRef.WorkloadRef.APIVersion = "batch/v1"

	tests := []struct {
		name string
		ro   *rolloutsv1alpha1.Rollout
		want []string
	}{
		{"an unknown rolling style", style, []string{"metadata.annotations[rollouts.kruise.io/rolling-style]", "blue-green"}},
		{"a weight smaller than the one before", shrinking, []string{"spec.strategy.canary.steps[1].weight"}},
		{"a weight of 0", zero, []string{"spec.strategy.canary.steps[0].weight", `"0"`}},
		{"neither weight nor replicas", noWeight, []string{"spec.strategy.canary.steps[0].replicas"}},
		{"an unknown workload kind", unknownKind, []string{"spec.objectRef.workloadRef.kind"}},
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
	if err := suite.c.Create(ctxFor(t), base("valid")); err != nil {
		t.Fatalf("a valid v1alpha1 Rollout was rejected: %v", err)
	}
}
