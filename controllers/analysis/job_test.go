package analysis_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/provider/job"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	"github.com/sluice-dev/sluice/test/poll"
)

// kwokFailLabel makes kwok fail a pod's container (exit code 1) instead of
// completing it: kwok's pod/chaos stage, which the local control plane
// loads beside pod/fast.
const kwokFailLabel = "pod-container-running-failed.stage.kwok.x-k8s.io"

// jobMetric runs a one-container Job count times; fail makes kwok fail its
// pod.
func jobMetric(name string, count int32, fail bool) analysisv1alpha1.Metric {
	labels := map[string]string{}
	if fail {
		labels[kwokFailLabel] = "true"
	}
	return analysisv1alpha1.Metric{
		Name:     name,
		Interval: metav1.Duration{Duration: time.Second},
		Count:    count,
		Provider: analysisv1alpha1.MetricProvider{Job: &analysisv1alpha1.JobMetric{
			Metadata: analysisv1alpha1.JobMetadata{Labels: map[string]string{"purpose": "smoke-test"}},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "smoke", Image: "curlimages/curl", Args: []string{"http://$(SLUICE_ROLLOUT)"}}}},
				},
			},
		}},
	}
}

// Given a release paused at step 1 and a MetricGate whose metric runs a
// Job twice,
// when kwok completes each Job's pod,
// then the run passed with two measurements "true", and the Jobs were
// owned by the gate, labelled, and given the template variables; the
// first measurement's Job was deleted once the second started.
func TestMetricGate_jobThatCompletes_passes(t *testing.T) {
	ns, _ := releasedApp(t, "checkout")
	g := gate(ns, "smoke", "checkout", jobMetric("smoke", 2, false))
	createGate(t, g)

	run := waitRun(t, ns, "smoke", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	mr := run.Metrics[0]
	if mr.Measured != 2 || mr.Measurements[0].Value != "true" || mr.Measurements[1].Value != "true" {
		t.Fatalf("metric run %+v", mr)
	}
	var seen string
	poll.Until(t, "only the last measurement's Job left", func() (bool, string) {
		jobs := &batchv1.JobList{}
		if err := suite.c.List(poll.Context(t), jobs, client.InNamespace(ns), client.MatchingLabels{job.LabelGate: "smoke"}); err != nil {
			return false, err.Error()
		}
		var live []batchv1.Job
		for _, j := range jobs.Items {
			if j.DeletionTimestamp == nil {
				live = append(live, j)
			}
		}
		seen = fmt.Sprintf("%d live jobs", len(live))
		if len(live) != 1 {
			return false, seen
		}
		j := live[0]
		env := map[string]string{}
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		ok := j.Labels[job.LabelIndex] == "2" && j.Labels["purpose"] == "smoke-test" &&
			len(j.OwnerReferences) == 1 && j.OwnerReferences[0].Kind == "MetricGate" && j.OwnerReferences[0].Name == "smoke" &&
			env["SLUICE_ROLLOUT"] == "checkout" && env["SLUICE_STEP"] == "1" && env["SLUICE_NAMESPACE"] == ns
		return ok, fmt.Sprintf("labels %v owners %v env %v", j.Labels, j.OwnerReferences, env)
	})
}

// Given the same release and a Job whose pod kwok fails,
// when the Job controller marks the Job Failed,
// then the measurement is "false", Failed, and the run failed.
func TestMetricGate_jobThatFails_failsTheStep(t *testing.T) {
	ns, _ := releasedApp(t, "checkout")
	createGate(t, gate(ns, "smoke", "checkout", jobMetric("smoke", 3, true)))

	run := waitRun(t, ns, "smoke", "checkout", 1, "Failed", verdictIs(analysisv1alpha1.VerdictFailed))
	mr := run.Metrics[0]
	if mr.Measured != 1 || mr.Measurements[0].Value != "false" || mr.Measurements[0].Outcome != analysisv1alpha1.OutcomeFailed {
		t.Fatalf("metric run %+v", mr)
	}
	if run.Message != "smoke false: result == true is false" {
		t.Errorf("run message %q", run.Message)
	}
}
