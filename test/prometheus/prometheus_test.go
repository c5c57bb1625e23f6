package prometheus

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/test/poll"
)

// The server scrapes the exporter, and a rate over a few seconds is the
// pace the test set.
func TestStart_scrapesTheExporter(t *testing.T) {
	e := NewExporter(t, "app_requests_total", "code")
	e.Serve(prometheus.Labels{"code": "200"}, 9)
	e.Serve(prometheus.Labels{"code": "500"}, 1)
	s := Start(t, e.Target())
	q := `sum(rate(app_requests_total{code="500"}[5s])) / sum(rate(app_requests_total[5s]))`
	poll.Until(t, "an error ratio of 10%", func() (bool, string) {
		v, err := s.Query(context.Background(), q)
		if err != nil || len(v) != 1 {
			return false, fmt.Sprint(v, err)
		}
		return math.Abs(v[0]-0.1) < 0.02, fmt.Sprint(v)
	})
}
