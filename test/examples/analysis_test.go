package examples

import (
	"fmt"
	"strings"
	"testing"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	"github.com/sluice-dev/sluice/test/prometheus"
)

// prometheusGate stands in for the cluster's Prometheus of
// examples/canary-prometheus-gate: a real Prometheus on loopback scraping
// counters labelled as the README's scrape configuration labels the pods'
// (namespace, pod_template_hash, code), with the new pods answering 1% of
// their requests with a 500. It points the example's MetricGate at it,
// with intervals of seconds instead of the example's minutes. At step 1 it
// serves the new revision's counters and waits until the gate's analysis of
// step 1 passed, as the README says.
//
// Step 1 waits for the analysis and goes on by itself once it passed; the
// approval TestExamples_releaseAsDocumented then writes for step 1 (it
// approves every paused step) finds the step done and changes nothing.
func prometheusGate(t *testing.T) func(t *testing.T, step int) {
	const ns, gateName = "demo-analysis", "storefront-errors"
	e := prometheus.NewExporter(t, "http_requests_total", "namespace", "pod_template_hash", "code")
	prom := prometheus.Start(t, e.Target())
	g := &analysisv1alpha1.MetricGate{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: gateName}, g); err != nil {
		t.Fatal(err)
	}
	m := &g.Spec.Metrics[0]
	m.Provider.Prometheus.Address = prom.URL
	m.Interval.Duration, m.InitialDelay.Duration = time.Second, 10*time.Second
	if err := suite.c.Update(ctxFor(t), g); err != nil {
		t.Fatalf("pointing the MetricGate at the test's Prometheus: %v", err)
	}
	return func(t *testing.T, step int) {
		if step != 1 {
			return
		}
		hash := getRollout(t, ns, "storefront").Status.CanaryStatus.PodTemplateHash
		e.Serve(promclient.Labels{"namespace": ns, "pod_template_hash": hash, "code": "200"}, 99)
		e.Serve(promclient.Labels{"namespace": ns, "pod_template_hash": hash, "code": "500"}, 1)
		eventually(t, "the analysis of step 1 passed", func() (bool, string) {
			got := &analysisv1alpha1.MetricGate{}
			if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: gateName}, got); err != nil {
				return false, err.Error()
			}
			ra := got.Status.RolloutAnalysisOf("storefront")
			if ra == nil || ra.RunOf(1) == nil {
				return false, fmt.Sprintf("%+v", got.Status)
			}
			run := ra.RunOf(1)
			return run.Verdict == analysisv1alpha1.VerdictPassed && strings.HasSuffix(run.Message, "(3/3 passed)"), fmt.Sprintf("%+v", run)
		})
	}
}
