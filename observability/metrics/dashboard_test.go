package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// collecting is a Registerer that keeps what is registered.
type collecting struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (c *collecting) Register(col prometheus.Collector) error {
	c.collectors = append(c.collectors, col)
	return c.Registerer.Register(col)
}

// registeredNames are the names of every series New registers, with the
// histograms' _bucket, _sum and _count.
func registeredNames(t *testing.T) []string {
	t.Helper()
	reg := &collecting{Registerer: prometheus.NewRegistry()}
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for _, c := range reg.collectors {
		descs := make(chan *prometheus.Desc, 10)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("no name in %s", d)
			}
			names = append(names, m[1])
			if _, ok := c.(*prometheus.HistogramVec); ok {
				names = append(names, m[1]+"_bucket", m[1]+"_sum", m[1]+"_count")
			}
		}
	}
	return names
}

// dashboardExprs reads every query of the Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/grafana/sluice-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	return exprs
}

// TestDashboard_matchesRegisteredSeries checks that every series the
// dashboard queries exists, and that every series has a panel.
func TestDashboard_matchesRegisteredSeries(t *testing.T) {
	names := registeredNames(t)
	exprs := dashboardExprs(t)
	used := map[string]bool{}
	series := regexp.MustCompile(`\bsluice_[a-z_]+\b`)
	for _, e := range exprs {
		for _, n := range series.FindAllString(e, -1) {
			used[n] = true
			if !slices.Contains(names, n) {
				t.Errorf("the dashboard queries %s, which sluice does not export", n)
			}
		}
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_sum") || strings.HasSuffix(n, "_count") {
			continue // a histogram is covered by its _bucket
		}
		if strings.HasSuffix(n, "_bucket") || !slices.ContainsFunc(names, func(b string) bool { return b == n+"_bucket" }) {
			if !used[n] {
				t.Errorf("no dashboard panel shows %s", n)
			}
		}
	}
}
