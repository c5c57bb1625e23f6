package prometheus

import (
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exporter serves, on a loopback port, a counter of requests by labels a
// test chooses (e.g. namespace, rollout, code), which it increases at a
// steady pace: Serve(labels, perTick) adds perTick to the counter with those
// labels every 100ms until the test ends, so that rates over a few seconds
// are what the test set.
type Exporter struct {
	srv     *httptest.Server
	counter *prometheus.CounterVec
	mu      sync.Mutex
	rates   map[string]float64
	labels  map[string]prometheus.Labels
}

// NewExporter serves the counter name with the label names given.
func NewExporter(t testing.TB, name string, labelNames ...string) *Exporter {
	t.Helper()
	reg := prometheus.NewRegistry()
	e := &Exporter{
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: "Requests served, by outcome."}, labelNames),
		rates:   map[string]float64{},
		labels:  map[string]prometheus.Labels{},
	}
	reg.MustRegister(e.counter)
	e.srv = httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	done := make(chan struct{})
	go e.tick(done)
	t.Cleanup(func() { close(done); e.srv.Close() })
	return e
}

// Target is the exporter's address, host:port, for a scrape config.
func (e *Exporter) Target() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// Serve sets how much the counter with labels grows every 100ms.
func (e *Exporter) Serve(labels prometheus.Labels, perTick float64) {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	key := strings.Join(pairs, ",")
	e.mu.Lock()
	e.rates[key], e.labels[key] = perTick, labels
	e.mu.Unlock()
}

func (e *Exporter) tick(done <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			e.mu.Lock()
			for k, r := range e.rates {
				e.counter.With(e.labels[k]).Add(r)
			}
			e.mu.Unlock()
		}
	}
}
