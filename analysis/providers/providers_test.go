package providers

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sluice-dev/sluice/analysis/condition"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

func TestKinds_eachRowIsComplete(t *testing.T) {
	c, err := condition.New()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if k.Name == "" || k.Set == nil || k.New == nil || k.Validate == nil {
			t.Errorf("kind %q: incomplete row", k.Name)
		}
		if seen[k.Name] {
			t.Errorf("kind %q twice", k.Name)
		}
		seen[k.Name] = true
		if k.DefaultSuccessCondition != "" {
			if _, err := c.Compile(k.DefaultSuccessCondition); err != nil {
				t.Errorf("kind %q: default condition: %v", k.Name, err)
			}
		}
		if k.New(Deps{}) == nil {
			t.Errorf("kind %q: New gave nil", k.Name)
		}
	}
}

func TestKindOf(t *testing.T) {
	if _, err := KindOf(&analysisv1alpha1.MetricProvider{}); err == nil || !strings.Contains(err.Error(), "set exactly one of prometheus, web, job") {
		t.Fatalf("no provider: %v", err)
	}
	two := &analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{}, Web: &analysisv1alpha1.WebMetric{}}
	if _, err := KindOf(two); err == nil {
		t.Fatal("two providers accepted")
	}
	k, err := KindOf(&analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{}})
	if err != nil || k.Name != "web" {
		t.Fatalf("web: %v %v", k.Name, err)
	}
}

func TestValidate(t *testing.T) {
	path := field.NewPath("spec", "metrics").Index(0).Child("provider")
	tests := []struct {
		name string
		p    analysisv1alpha1.MetricProvider
		want []string // fields named, in order
	}{
		{name: "good prometheus", p: analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{
			Address: "http://prometheus:9090", Query: `rate(x{service="${canaryService}"}[1m])`}}},
		{name: "bad prometheus", p: analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{
			Address: "http://", Query: `${canary}`}},
			want: []string{"spec.metrics[0].provider.prometheus.address", "spec.metrics[0].provider.prometheus.query"}},
		{name: "good web", p: analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{
			URL: "http://${canaryService}.${namespace}:8080/stats", JSONPath: "{.errorRate}"}}},
		{name: "bad web", p: analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{
			URL: "http://x/${nope}", Body: "${nope}", JSONPath: "{.a[", Headers: []analysisv1alpha1.HTTPHeader{{Name: "X", Value: "${nope}"}}}},
			want: []string{"spec.metrics[0].provider.web.url", "spec.metrics[0].provider.web.body", "spec.metrics[0].provider.web.headers[0].value", "spec.metrics[0].provider.web.jsonPath"}},
		{name: "good job", p: analysisv1alpha1.MetricProvider{Job: &analysisv1alpha1.JobMetric{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "t", Image: "busybox"}}}}}}}},
		{name: "bad job", p: analysisv1alpha1.MetricProvider{Job: &analysisv1alpha1.JobMetric{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways}}}}},
			want: []string{"spec.metrics[0].provider.job.spec.template.spec.containers", "spec.metrics[0].provider.job.spec.template.spec.restartPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &analysisv1alpha1.Metric{Name: "m", Provider: tt.p}
			k, err := KindOf(&m.Provider)
			if err != nil {
				t.Fatal(err)
			}
			errs := k.Validate(m, path)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("fields = %v, want %v (%v)", got, tt.want, errs)
			}
		})
	}
}
