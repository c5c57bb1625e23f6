package metricgate

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/analysis/condition"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

func prom(q string) analysisv1alpha1.MetricProvider {
	return analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{Address: "http://prometheus:9090", Query: q}}
}

func TestValidate(t *testing.T) {
	job := analysisv1alpha1.MetricProvider{Job: &analysisv1alpha1.JobMetric{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "t", Image: "busybox"}}}}}}}
	tests := []struct {
		name    string
		metrics []analysisv1alpha1.Metric
		sel     metav1.LabelSelector
		want    []string // substrings of the message, each naming a field
	}{
		{name: "good", metrics: []analysisv1alpha1.Metric{{Name: "error-rate", Provider: prom(`x{s="${canaryService}"}`), SuccessCondition: "result < 0.05",
			Interval: metav1.Duration{Duration: time.Minute}, Count: 5}}},
		{name: "a job needs no condition", metrics: []analysisv1alpha1.Metric{{Name: "smoke", Provider: job, Count: 1}}},
		{name: "condition that does not compile", metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("x"), SuccessCondition: "result <"}},
			want: []string{"spec.metrics[0].successCondition: Invalid value: \"result <\": invalid CEL expression"}},
		{name: "failure condition naming an unknown variable", metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("x"), FailureCondition: "value > 1"}},
			want: []string{"spec.metrics[0].failureCondition", "undeclared reference to 'value'"}},
		{name: "no condition for prometheus", metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("x")}},
			want: []string{"spec.metrics[0].successCondition: Required value: a prometheus metric needs successCondition or failureCondition"}},
		{name: "unknown variable in the query", metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("${canary}"), SuccessCondition: "result < 1"}},
			want: []string{"spec.metrics[0].provider.prometheus.query", "unknown variable ${canary}"}},
		{name: "interval too short", metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("x"), SuccessCondition: "result < 1", Interval: metav1.Duration{Duration: time.Millisecond}}},
			want: []string{"spec.metrics[0].interval", "at least 1s"}},
		{name: "no provider", metrics: []analysisv1alpha1.Metric{{Name: "e", SuccessCondition: "result"}},
			want: []string{"spec.metrics[0].provider", "set exactly one of prometheus, web, job"}},
		{name: "bad selector", sel: metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}},
			metrics: []analysisv1alpha1.Metric{{Name: "e", Provider: prom("x"), SuccessCondition: "result"}},
			want:    []string{"spec.rolloutSelector"}},
	}
	c, err := condition.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &analysisv1alpha1.MetricGateSpec{RolloutSelector: tt.sel, Metrics: tt.metrics, Run: analysisv1alpha1.RunPolicy{Steps: []int32{1}}}
			msg := Validate(c, spec).ToAggregate()
			if len(tt.want) == 0 {
				if msg != nil {
					t.Fatalf("Validate() = %v, want no error", msg)
				}
				return
			}
			if msg == nil {
				t.Fatalf("Validate() accepted it, want %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", msg.Error(), w)
				}
			}
		})
	}
}
