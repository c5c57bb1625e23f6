package job

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/analysis/provider"
	"github.com/sluice-dev/sluice/analysis/vars"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

func query(restart corev1.RestartPolicy) provider.Query {
	return provider.Query{
		Gate: &analysisv1alpha1.MetricGate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout-smoke-tests-for-the-canary", UID: "u1"}},
		Metric: &analysisv1alpha1.Metric{Name: "smoke", Provider: analysisv1alpha1.MetricProvider{Job: &analysisv1alpha1.JobMetric{
			Metadata: analysisv1alpha1.JobMetadata{Labels: map[string]string{"team": "shop"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: restart,
				Containers:    []corev1.Container{{Name: "test", Image: "curl"}},
			}}},
		}}},
		Vars: vars.Values{"namespace": "shop", "canaryService": "checkout-canary"},
		Key:  provider.Key{Rollout: "checkout", Revision: "7c9b", Step: 2, Metric: "smoke", Index: 3},
	}
}

func TestBuild(t *testing.T) {
	q := query(corev1.RestartPolicyNever)
	j, err := Build(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Name) > 52 || !strings.HasPrefix(j.Name, "checkout-smoke-tests-smoke-") {
		t.Errorf("name %q", j.Name)
	}
	if j.Labels["team"] != "shop" || j.Labels[LabelIndex] != "3" || j.Labels[LabelStep] != "2" || j.Labels[LabelKey] != q.Key.Hash() {
		t.Errorf("labels %v", j.Labels)
	}
	if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "MetricGate" || j.OwnerReferences[0].UID != "u1" {
		t.Errorf("owner %v", j.OwnerReferences)
	}
	if j.Spec.TTLSecondsAfterFinished == nil || *j.Spec.TTLSecondsAfterFinished != DefaultTTL {
		t.Errorf("ttl %v", j.Spec.TTLSecondsAfterFinished)
	}
	env := j.Spec.Template.Spec.Containers[0].Env
	if len(env) != 2 || env[0].Name != "SLUICE_CANARY_SERVICE" || env[0].Value != "checkout-canary" || env[1].Name != "SLUICE_NAMESPACE" {
		t.Errorf("env %v", env)
	}
	if q.Metric.Provider.Job.Spec.Template.Spec.Containers[0].Env != nil {
		t.Error("Build changed the template")
	}
	again, _ := Build(q)
	if again.Name != j.Name {
		t.Error("the same measurement got another Job name")
	}
	q.Key.Index = 4
	if next, _ := Build(q); next.Name == j.Name {
		t.Error("the next measurement got the same Job name")
	}
}

func TestBuild_refusesARestartPolicyAJobCannotHave(t *testing.T) {
	if _, err := Build(query(corev1.RestartPolicyAlways)); err == nil || !strings.Contains(err.Error(), "restartPolicy") {
		t.Fatalf("error = %v", err)
	}
}

func TestOutcome(t *testing.T) {
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: t, Status: s}}}}
	}
	if r := Outcome(&batchv1.Job{}); !r.Pending {
		t.Error("a new Job is not pending")
	}
	if r := Outcome(cond(batchv1.JobComplete, corev1.ConditionTrue)); r.Pending || r.Value != true {
		t.Errorf("complete: %+v", r)
	}
	if r := Outcome(cond(batchv1.JobFailed, corev1.ConditionTrue)); r.Pending || r.Value != false {
		t.Errorf("failed: %+v", r)
	}
	if r := Outcome(cond(batchv1.JobFailed, corev1.ConditionFalse)); !r.Pending {
		t.Errorf("failed=False: %+v", r)
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"namespace": "SLUICE_NAMESPACE", "canaryRevision": "SLUICE_CANARY_REVISION", "step": "SLUICE_STEP"} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}
