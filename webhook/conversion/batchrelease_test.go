package conversion

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/yaml"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// kruiseBatchRelease is a BatchRelease as OpenKruise Rollouts stored it in
// v1alpha1, in the middle of a release: the rolling style only in the
// annotation, batch 1 of 3 ready.
const kruiseBatchRelease = `
apiVersion: rollouts.kruise.io/v1alpha1
kind: BatchRelease
metadata:
  name: web
  namespace: shop
  annotations:
    rollouts.kruise.io/rolling-style: partition
spec:
  targetReference:
    workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  releasePlan:
    batches: [{canaryReplicas: 1}, {canaryReplicas: 50%}, {canaryReplicas: 100%}]
    batchPartition: 0
    rolloutID: r2
    failureThreshold: 20%
    finalizingPolicy: WaitResume
    enableExtraWorkloadForCanary: false
status:
  phase: Progressing
  stableRevision: 5b6c8f
  updateRevision: 7d9f4c
  observedGeneration: 3
  observedRolloutID: r2
  observedWorkloadReplicas: 4
  observedReleasePlanHash: abc
  canaryStatus: {batchState: Ready, currentBatch: 0, updatedReplicas: 1, updatedReadyReplicas: 1}
`

// Given the conversion webhook as the manager serves it
// When the API server sends it a v1alpha1 BatchRelease OpenKruise stored
// mid-release, to read as v1beta1, and then that form back to v1alpha1
// Then the v1beta1 form names the workload in spec.workloadRef, takes the
// rolling style from the annotation and keeps the plan and the progress;
// read back as v1alpha1 it is exactly as stored.
func TestBatchRelease_convertsOpenKruisesV1alpha1BothWays(t *testing.T) {
	s := runtime.NewScheme()
	if err := rolloutsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := rolloutsv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := BatchReleaseConverter(s)
	if err != nil {
		t.Fatal(err)
	}
	reg := crconversion.NewRegistry()
	if err := reg.RegisterConverter(rolloutsv1beta1.GroupVersion.WithKind("BatchRelease").GroupKind(), c); err != nil {
		t.Fatal(err)
	}
	h := crconversion.NewWebhookHandler(s, reg)
	manifest, err := yaml.YAMLToJSON([]byte(kruiseBatchRelease))
	if err != nil {
		t.Fatal(err)
	}

	stored := review(t, h, "rollouts.kruise.io/v1beta1", manifest)[0]
	var beta rolloutsv1beta1.BatchRelease
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(stored, &beta); err != nil {
		t.Fatal(err)
	}
	p := beta.Spec.ReleasePlan
	if beta.Spec.WorkloadRef.Name != "web" || beta.Spec.WorkloadRef.Kind != "Deployment" || p.RollingStyle != rolloutsv1beta1.PartitionRollingStyle ||
		len(p.Batches) != 3 || p.BatchPartition == nil || *p.BatchPartition != 0 || p.RolloutID != "r2" ||
		p.FailureThreshold == nil || p.FailureThreshold.String() != "20%" || p.FinalizingPolicy != rolloutsv1beta1.WaitResumeFinalizingPolicy {
		t.Fatalf("v1beta1 spec %+v", beta.Spec)
	}
	if st := beta.Status; st.Phase != rolloutsv1beta1.RolloutPhaseProgressing || st.UpdateRevision != "7d9f4c" || st.CanaryStatus.CurrentBatchState != rolloutsv1beta1.ReadyBatchState ||
		st.CanaryStatus.UpdatedReadyReplicas != 1 || st.ObservedWorkloadReplicas != 4 {
		t.Fatalf("v1beta1 status %+v", st)
	}

	storedJSON, _ := json.Marshal(stored)
	read := review(t, h, "rollouts.kruise.io/v1alpha1", storedJSON)[0]
	want := map[string]any{}
	if err := json.Unmarshal(manifest, &want); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"spec", "metadata", "status"} {
		got, _ := json.Marshal(read[part])
		w, _ := json.Marshal(want[part])
		if string(got) != string(w) {
			t.Fatalf("read back as v1alpha1, %s:\n%s\nwant:\n%s", part, got, w)
		}
	}
}

// Given a v1beta1 BatchRelease holding its workload on the stable revision
// (holdStable, which v1alpha1 has no field for)
// When it is read as v1alpha1 and written back
// Then holdStable rides along in an annotation and comes back.
func TestBatchRelease_holdStableSurvivesV1alpha1(t *testing.T) {
	in := &rolloutsv1beta1.BatchRelease{Spec: rolloutsv1beta1.BatchReleaseSpec{
		WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"},
		ReleasePlan: rolloutsv1beta1.ReleasePlan{HoldStable: true, RollingStyle: rolloutsv1beta1.PartitionRollingStyle},
	}}
	alpha := &rolloutsv1alpha1.BatchRelease{}
	BatchReleaseToV1alpha1(in, alpha)
	if alpha.Annotations[rolloutsv1alpha1.V1beta1FieldsAnnotation] == "" || alpha.Spec.TargetRef.WorkloadRef == nil || alpha.Spec.TargetRef.WorkloadRef.Name != "db" {
		t.Fatalf("v1alpha1 form %+v", alpha)
	}
	back := &rolloutsv1beta1.BatchRelease{}
	BatchReleaseToV1beta1(alpha, back)
	if !back.Spec.ReleasePlan.HoldStable || len(back.Annotations) != 0 || back.Spec.WorkloadRef != in.Spec.WorkloadRef {
		t.Fatalf("back as v1beta1: %+v", back)
	}
	u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(back)
	if _, found, _ := unstructured.NestedFieldNoCopy(u, "spec", "targetReference"); found {
		t.Fatal("v1beta1 form has a targetReference")
	}
}
