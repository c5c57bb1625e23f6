//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/poll"
)

// Given one manager serving the GitHub webhook receiver and the admission
// webhooks, and a release of a Deployment paused at step 1 (held)
// When 10,000 forged or unsigned GitHub deliveries (CHAOS_DELIVERIES) are
// sent at it from 16 clients, while the held Deployment is updated again
// and again (each update judged by the workload webhook)
// Then every delivery is rejected (401, or 400 for a malformed one), none
// triggers anything, and the admission latency's p99 during the flood
// stays within three times (plus 50ms) its p99 before; the figures are
// logged.
func TestWebhookFlood_forgedDeliveriesRejectedAdmissionUnaffected(t *testing.T) {
	deliveries := 10000
	if v := os.Getenv("CHAOS_DELIVERIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_DELIVERIES=%q: want a positive number", v)
		}
		deliveries = n
	}
	const name = "sluice-flood"
	t.Cleanup(func() { deleteWebhooks(name) })
	m := startManager(t, name, false)
	r := newReleases(t, 1, kindDeployment)[0]
	if err := r.setImage(context.Background(), "web:v1"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "step 1 paused", func() (bool, string) {
		ro, err := r.rollout(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused, ro.Status.Message
	})

	before := admissionLatencies(t, r.ns, 200, nil)

	var statuses sync.Map // status code -> *atomic.Int64
	var sent atomic.Int64
	var deliveryLat []time.Duration
	var latMu sync.Mutex
	url := "http://127.0.0.1:" + strconv.Itoa(m.GitHubHook) + app.GitHubWebhookPath
	flooding := make(chan struct{})
	var wg sync.WaitGroup
	began := time.Now()
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second}
			for i := w; i < deliveries; i += 16 {
				req := forgedDelivery(url, i)
				start := time.Now()
				resp, err := hc.Do(req)
				took := time.Since(start)
				code := 0
				if err == nil {
					code = resp.StatusCode
					_ = resp.Body.Close()
				}
				c, _ := statuses.LoadOrStore(code, &atomic.Int64{})
				c.(*atomic.Int64).Add(1)
				sent.Add(1)
				latMu.Lock()
				deliveryLat = append(deliveryLat, took)
				latMu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(flooding) }()
	during := admissionLatencies(t, r.ns, 200, flooding)
	<-flooding
	took := time.Since(began)

	counts := map[int]int64{}
	statuses.Range(func(k, v any) bool { counts[k.(int)] = v.(*atomic.Int64).Load(); return true })
	for code, n := range counts {
		if code != http.StatusUnauthorized && code != http.StatusBadRequest {
			t.Errorf("%d deliveries answered %d, want every forged or unsigned delivery rejected with 401 (or 400 when malformed)", n, code)
		}
	}
	t.Logf("%d forged/unsigned deliveries in %s (%.0f/s), answers %v, delivery latency p50 %s p99 %s",
		sent.Load(), took.Round(time.Millisecond), float64(sent.Load())/took.Seconds(), counts, quantile(deliveryLat, 0.5), quantile(deliveryLat, 0.99))
	pb, pd := quantile(before, 0.99), quantile(during, 0.99)
	t.Logf("admission (workload webhook, update of a held Deployment): p50 %s p99 %s before the flood; p50 %s p99 %s during it (%d updates)",
		quantile(before, 0.5), pb, quantile(during, 0.5), pd, len(during))
	if pd > 3*pb+50*time.Millisecond {
		t.Errorf("admission p99 %s during the flood, more than three times (plus 50ms) the %s before it", pd, pb)
	}
	ro, err := r.rollout(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Errorf("after the flood the release is at step %d %s, want still paused at step 1", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
}

// forgedDelivery is the i-th delivery of the flood: alternately unsigned,
// signed with a wrong secret, and malformed, as push and pull_request
// events.
func forgedDelivery(url string, i int) *http.Request {
	body := fmt.Appendf(nil, `{"ref":"refs/heads/main","after":"%040x","repository":{"full_name":"shop/web-%d","clone_url":"https://github.com/shop/web.git"}}`, rand.Uint64(), i%7)
	if i%3 == 2 {
		body = []byte(`{"repository":`) // malformed
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("flood-%d", i))
	if i%2 == 0 {
		req.Header.Set("X-GitHub-Event", "push")
	} else {
		req.Header.Set("X-GitHub-Event", "pull_request")
	}
	if i%3 == 1 {
		req.Header.Set("X-Hub-Signature-256", fmt.Sprintf("sha256=%064x", rand.Uint64()))
	}
	return req
}

// admissionLatencies updates an annotation of the held Deployment web in
// ns n times (or, with until, until it is closed) and returns how long each
// update took, the workload webhook's judgement included.
func admissionLatencies(t *testing.T, ns string, n int, until <-chan struct{}) []time.Duration {
	t.Helper()
	var out []time.Duration
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	for i := 0; ; i++ {
		if until == nil && i >= n {
			return out
		}
		if until != nil {
			select {
			case <-until:
				return out
			default:
			}
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"chaos.sluice.dev/probe":"%d"}}}`, i)
		start := time.Now()
		if err := suite.c.Patch(context.Background(), d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl")); err != nil {
			t.Fatalf("updating the held Deployment: %v", err)
		}
		out = append(out, time.Since(start))
	}
}

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)].Round(100 * time.Microsecond)
}
