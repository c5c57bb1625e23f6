package analysis_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxcd/pkg/apis/meta"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-dev/sluice/test/poll"
	"github.com/sluice-dev/sluice/test/prometheus"
)

// errorRateQuery is the share of the Rollout's requests that failed over
// the last five seconds, with the template variables the gate replaces.
const errorRateQuery = `sum(rate(app_requests_total{namespace="${namespace}",rollout="${rollout}",code="500"}[5s]))` +
	` / sum(rate(app_requests_total{namespace="${namespace}",rollout="${rollout}"}[5s]))`

// promApp releases the app and starts a real Prometheus scraping an
// exporter whose counters fail errorsPerHundred of every hundred of the
// Rollout's requests; it returns once Prometheus has data to answer the
// query with.
func promApp(t *testing.T, errorsPerHundred float64, o prometheus.Options) (ns string, prom *prometheus.Server) {
	t.Helper()
	ns, _ = releasedApp(t, "checkout")
	e := prometheus.NewExporter(t, "app_requests_total", "namespace", "rollout", "code")
	e.Serve(promclient.Labels{"namespace": ns, "rollout": "checkout", "code": "200"}, 100-errorsPerHundred)
	e.Serve(promclient.Labels{"namespace": ns, "rollout": "checkout", "code": "500"}, errorsPerHundred)
	prom = prometheus.StartWith(t, o, e.Target())
	q := strings.NewReplacer("${namespace}", ns, "${rollout}", "checkout").Replace(errorRateQuery)
	poll.Until(t, "prometheus answering the error rate", func() (bool, string) {
		v, err := prom.Query(context.Background(), q)
		return err == nil && len(v) == 1 && !math.IsNaN(v[0]), fmt.Sprint(v, err)
	})
	return ns, prom
}

func promMetric(address string) analysisv1alpha1.Metric {
	return analysisv1alpha1.Metric{
		Name:             "error-rate",
		Provider:         analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{Address: address, Query: errorRateQuery}},
		Interval:         metav1.Duration{Duration: time.Second},
		Count:            3,
		SuccessCondition: "result < 0.05",
	}
}

// Given a release paused at step 1, a real Prometheus scraping the app's
// request counters, 1% of which are errors, and a MetricGate measuring the
// error rate at step 1,
// when it measures three times,
// then the run passed, each measurement near 0.01.
func TestMetricGate_prometheusErrorRateBelowThreshold_passes(t *testing.T) {
	ns, prom := promApp(t, 1, prometheus.Options{})
	createGate(t, gate(ns, "errors", "checkout", promMetric(prom.URL)))

	run := waitRun(t, ns, "errors", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	for _, m := range run.Metrics[0].Measurements {
		if v, err := strconv.ParseFloat(m.Value, 64); err != nil || math.Abs(v-0.01) > 0.01 {
			t.Errorf("measurement %+v: want about 0.01", m)
		}
	}
	if !strings.HasPrefix(run.Message, "error-rate 0.0") || !strings.HasSuffix(run.Message, "(3/3 passed)") {
		t.Errorf("run message %q", run.Message)
	}
}

// Given the same, with 30% of the requests failing,
// when the gate measures,
// then the run failed at the first measurement, its message naming the
// metric, a value near 0.3 and the condition it broke.
func TestMetricGate_prometheusErrorRateAboveThreshold_fails(t *testing.T) {
	ns, prom := promApp(t, 30, prometheus.Options{})
	createGate(t, gate(ns, "errors", "checkout", promMetric(prom.URL)))

	run := waitRun(t, ns, "errors", "checkout", 1, "Failed", verdictIs(analysisv1alpha1.VerdictFailed))
	m := run.Metrics[0].Measurements[0]
	if v, err := strconv.ParseFloat(m.Value, 64); err != nil || math.Abs(v-0.3) > 0.05 || m.Outcome != analysisv1alpha1.OutcomeFailed {
		t.Errorf("measurement %+v: want a failed one near 0.3", m)
	}
	if want := "error-rate " + m.Value + ": result < 0.05 is false"; run.Message != want {
		t.Errorf("run message %q, want %q", run.Message, want)
	}
}

// Given a Prometheus that asks for basic authentication,
// when one gate gives the credentials from a Secret and another none,
// then the first passes and the second's measurements are Errors naming
// the refusal (Inconclusive past its limit).
func TestMetricGate_prometheusBehindBasicAuth_readsTheCredentialsFromASecret(t *testing.T) {
	ns, prom := promApp(t, 1, prometheus.Options{BasicAuth: &prometheus.BasicAuth{User: "sluice", Password: "s3cret"}})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"},
		StringData: map[string]string{"username": "sluice", "password": "s3cret"}}
	if err := suite.c.Create(poll.Context(t), secret); err != nil {
		t.Fatal(err)
	}
	withAuth := promMetric(prom.URL)
	withAuth.Provider.Prometheus.SecretRef = &meta.LocalObjectReference{Name: "prometheus"}
	createGate(t, gate(ns, "with-auth", "checkout", withAuth))
	createGate(t, gate(ns, "without", "checkout", promMetric(prom.URL)))

	waitRun(t, ns, "with-auth", "checkout", 1, "Passed", verdictIs(analysisv1alpha1.VerdictPassed))
	run := waitRun(t, ns, "without", "checkout", 1, "Inconclusive", verdictIs(analysisv1alpha1.VerdictInconclusive))
	if m := run.Metrics[0].Measurements[0]; m.Outcome != analysisv1alpha1.OutcomeError || !strings.Contains(m.Message, "401") {
		t.Errorf("measurement without credentials %+v: want an Error naming the 401", m)
	}
}
