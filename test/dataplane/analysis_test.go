package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/prometheus"
)

// The pods answer every request with their image; a pod whose image has a
// failure rate answers that share of its requests with 500 instead (every
// request whose number, counted per image, ends in 0, 1 or 2 for 30%),
// and every answer is counted, by image and code, in the pods' own metric
// dataplane_pod_requests_total, which podMetrics serves for Prometheus.
var (
	failureTenths sync.Map // image -> int: tenths of the requests that fail
	answered      sync.Map // image -> *atomic.Int64
	podRequests   = promclient.NewCounterVec(promclient.CounterOpts{
		Name: "dataplane_pod_requests_total", Help: "Requests the fake pods answered, by image and code.",
	}, []string{"image", "code"})
	podMetricsOnce sync.Once
	podMetricsAddr string
)

// podAnswer is the status code of the next answer of a pod running image,
// counted.
func podAnswer(image string) int {
	code := http.StatusOK
	if v, ok := failureTenths.Load(image); ok {
		n, _ := answered.LoadOrStore(image, &atomic.Int64{})
		if int(n.(*atomic.Int64).Add(1)%10) < v.(int) {
			code = http.StatusInternalServerError
		}
	}
	podRequests.WithLabelValues(image, fmt.Sprint(code)).Inc()
	return code
}

// podMetrics serves the pods' metric (once per test binary) and returns
// its address for a scrape config.
func podMetrics(t *testing.T) string {
	t.Helper()
	podMetricsOnce.Do(func() {
		reg := promclient.NewRegistry()
		reg.MustRegister(podRequests)
		srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		podMetricsAddr = strings.TrimPrefix(srv.URL, "http://")
	})
	return podMetricsAddr
}

// sendTraffic sends requests for the routes of ns through the proxy, ten
// every 100ms, until the test ends: the traffic the analysis measures.
func sendTraffic(t *testing.T, ns string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			suite.proxy.send(ctx, hostOf(ns), 10, nil)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// errorRateGate creates the MetricGate errors of ns: at step 1, the share
// of 5xx answers of the pods running image, from prom, must stay under 5%,
// three times, three seconds apart.
func errorRateGate(t *testing.T, ns, prom, image string) {
	t.Helper()
	q := fmt.Sprintf(`(sum(rate(dataplane_pod_requests_total{image=%q,code=~"5.."}[10s])) or vector(0))`+
		` / sum(rate(dataplane_pod_requests_total{image=%q}[10s]))`, image, image)
	g := &analysisv1alpha1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "errors"},
		Spec: analysisv1alpha1.MetricGateSpec{
			Run: analysisv1alpha1.RunPolicy{Steps: []int32{1}},
			Metrics: []analysisv1alpha1.Metric{{
				Name:     "error-rate",
				Provider: analysisv1alpha1.MetricProvider{Prometheus: &analysisv1alpha1.PrometheusMetric{Address: prom, Query: q}},
				// The canary's first answers reach Prometheus within a
				// scrape or two; until then the query matches no series.
				InitialDelay: metav1.Duration{Duration: 4 * time.Second}, Interval: metav1.Duration{Duration: 3 * time.Second},
				Count: 3, SuccessCondition: "result < 0.05", InconclusiveLimit: 3,
			}},
		},
	}
	if err := suite.c.Create(ctxFor(t), g); err != nil {
		t.Fatalf("creating metricgate: %v", err)
	}
}

func getRollout(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

// Given the data plane of the traffic tests (Traefik in front of one
// server per pod) with steps 1 pod and 20% / 100%, real traffic through
// the proxy, a real Prometheus scraping the pods' request counts, and a
// MetricGate requiring under 5% of 5xx from the new pods at step 1,
// when a good v2 (no errors) is released,
// then its analysis passes, step 1 goes on without an approval and the
// release completes: every request reaches v2.
func TestDataPlane_analysis_goodCanaryPassesAndCompletes(t *testing.T) {
	const good = "registry.example/web:v2-good"
	prom := prometheus.Start(t, podMetrics(t))
	ns := release(t, step("1", "20%"), step("100%", "100%"))
	sendTraffic(t, ns)
	errorRateGate(t, ns, prom.URL, good)

	setImage(t, ns, "web", good)
	waitRollout(t, ns, "web", "completed without an approval", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			r.Status.CanaryStatus.StableRevision == r.Status.CanaryStatus.CanaryRevision
	})
	if ro := getRollout(t, ns); ro.Status.Aborted != nil || ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation] != "" {
		t.Fatalf("aborted %+v, approvals %q: want the analysis alone to let step 1 go on", ro.Status.Aborted, ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	}
	eventually(t, "every request on v2", func() (bool, string) {
		c := suite.proxy.send(ctxFor(t), hostOf(ns), 50, nil)
		return c[good] == 50, fmt.Sprint(c)
	})
}

// Given the same data plane and gate, a Notifier sending to a local
// webhook, and a GitGate posting commit statuses on a fake GitHub for the
// commit the Deployment names,
// when a bad v2 (30% of its answers 5xx) is released,
// then its analysis fails at step 1, the release is aborted by the gate
// naming the metric and its value, every request is back on v1 within
// seconds, the commit's status turns failure naming the metric and the
// value, and an Aborted notification arrives saying so.
func TestDataPlane_analysis_badCanaryFailsAtStep1AndTrafficGoesBackToStable(t *testing.T) {
	const bad = "registry.example/web:v2-bad"
	failureTenths.Store(bad, 3)
	prom := prometheus.Start(t, podMetrics(t))
	hook := newHook(t)
	ns := release(t, step("1", "20%"), step("100%", "100%"))
	notifyTo(t, ns, hook.URL)
	gh, commit := commitGate(t, ns, bad)
	sendTraffic(t, ns)
	errorRateGate(t, ns, prom.URL, bad)

	setImage(t, ns, "web", bad)
	waitRollout(t, ns, "web", "aborted", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil
	})
	ab := getRollout(t, ns).Status.Aborted
	if ab.By != "MetricGate errors" || ab.Via != "analysis" || ab.Step != 1 ||
		!strings.HasPrefix(ab.Reason, "error-rate 0.") || !strings.HasSuffix(ab.Reason, ": result < 0.05 is false") {
		t.Fatalf("aborted %+v, want it by the gate at step 1, naming the metric and its value", ab)
	}
	eventually(t, "every request back on v1", func() (bool, string) {
		c := suite.proxy.send(ctxFor(t), hostOf(ns), 50, nil)
		return c[v1] == 50, fmt.Sprint(c)
	})
	back := time.Since(ab.At.Time)
	t.Logf("aborted %s; every request on v1 %s after the abort", ab.Reason, back.Round(100*time.Millisecond))
	if back > 30*time.Second {
		t.Errorf("traffic back on stable %s after the abort, want within seconds", back)
	}
	waitCommitStatus(t, gh, ns, commit, "failure", "aborted at step 1: error-rate 0.", ": result < 0.05 is false")
	n := hook.wait(t, notificationv1alpha1.EventAborted)
	if n.Rollout != "web" || n.Step != 1 || n.Revision == "" ||
		!strings.Contains(n.Message, "aborted by MetricGate errors via analysis at step 1/2 (error-rate 0.") {
		t.Fatalf("Aborted notification %+v, want the rollout, step 1, the revision and who aborted it why", n)
	}
}

// hook is a local webhook receiver keeping the notifications it gets.
type hook struct {
	*httptest.Server
	mu  sync.Mutex
	got []notificationv1alpha1.Notification
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n notificationv1alpha1.Notification
		if err := json.Unmarshal(body, &n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, n)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// wait waits for a notification of event and returns it.
func (h *hook) wait(t *testing.T, event notificationv1alpha1.Event) notificationv1alpha1.Notification {
	t.Helper()
	var found notificationv1alpha1.Notification
	eventually(t, "a notification "+string(event), func() (bool, string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		var seen []string
		for _, n := range h.got {
			seen = append(seen, string(n.Event)+": "+n.Message)
			if n.Event == event {
				found = n
				return true, ""
			}
		}
		return false, strings.Join(seen, " | ")
	})
	return found
}

// notifyTo creates a Notifier of ns sending every transition to url.
func notifyTo(t *testing.T, ns, url string) {
	t.Helper()
	n := &notificationv1alpha1.Notifier{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: notificationv1alpha1.NotifierSpec{
			Sinks: []notificationv1alpha1.Sink{{Name: "hook", Webhook: &notificationv1alpha1.WebhookSink{URL: url}}},
		},
	}
	if err := suite.c.Create(ctxFor(t), n); err != nil {
		t.Fatalf("creating notifier: %v", err)
	}
	// What the Rollout's state shows when a Notifier first sees it is
	// remembered, not sent: it must see the Rollout before the release.
	eventually(t, "the notifier seeing the rollout", func() (bool, string) {
		got := &notificationv1alpha1.Notifier{}
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "team"}, got); err != nil {
			return false, err.Error()
		}
		return len(got.Status.Rollouts) == 1, fmt.Sprintf("%+v", got.Status)
	})
}
