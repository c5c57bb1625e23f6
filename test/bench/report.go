package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// result is everything one benchmark run measured. Durations are seconds.
type result struct {
	Env      environment `json:"environment"`
	Rollouts int         `json:"rollouts"`
	Replicas int32       `json:"replicas"`
	Setup    setupTimes  `json:"setupSeconds"`
	// Completion is template change -> Rollout Completed, per Rollout.
	Completion summary `json:"completionSeconds"`
	// DeploymentsAvailable is first change -> every Deployment fully
	// updated and available.
	DeploymentsAvailable float64 `json:"deploymentsAvailableSeconds"`
	// Window is first change -> last Completed, the measured window.
	Window   float64       `json:"windowSeconds"`
	Requests requestReport `json:"requests"`
	// Controllers is what each controller of the manager did in the window.
	Controllers []controllerStats `json:"controllers"`
	Memory      memoryReport      `json:"memory"`
	// CPUSeconds is the CPU time (user and system) of the benchmark
	// process in the window.
	CPUSeconds float64         `json:"cpuSeconds"`
	PerRun     []rolloutResult `json:"perRollout"`
}

// environment describes where the benchmark ran.
type environment struct {
	GoVersion  string `json:"goVersion"`
	OSArch     string `json:"osArch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
}

// setupTimes break the setup down.
type setupTimes struct {
	Cluster   float64 `json:"cluster"`
	Manager   float64 `json:"crdsAndManager"`
	Workloads float64 `json:"workloads"`
	Total     float64 `json:"total"`
}

// rolloutResult is what one Rollout measured.
type rolloutResult struct {
	Namespace string  `json:"namespace"`
	Seconds   float64 `json:"seconds"`
	Writes    int     `json:"writes"`
}

// requestReport counts the manager's API requests in the window.
type requestReport struct {
	// Writes counts POST, PUT, PATCH and DELETE; RolloutWrites those sent to
	// the scenario's namespaces; PerRollout is Writes over the Rollouts.
	Writes        int      `json:"writes"`
	RolloutWrites int      `json:"rolloutWrites"`
	PerRollout    float64  `json:"writesPerRollout"`
	ByNamespace   summary  `json:"writesByNamespace"`
	WriteKinds    []count  `json:"writeKinds"`
	Failed        []count  `json:"failedRequests"`
	EmptyPatches  []count  `json:"emptyPatches"`
	Reads         int      `json:"reads"`
	ReadKinds     []count  `json:"readKinds"`
	After         int      `json:"writesAfterWindow"`
	AfterKinds    []count  `json:"writeKindsAfterWindow"`
	AfterSeconds  float64  `json:"afterWindowSeconds"`
	Notes         []string `json:"notes,omitempty"`
}

// count is how many requests of one kind were sent, and their mean
// latency (send to response headers).
type count struct {
	Kind   string  `json:"kind"`
	Count  int     `json:"count"`
	MeanMs float64 `json:"meanMs"`
}

// memoryReport is the Go memory of the benchmark process in the window.
type memoryReport struct {
	What       string    `json:"what"`
	IntervalMs int       `json:"intervalMs"`
	Samples    int       `json:"samples"`
	Baseline   memoryUse `json:"baseline"`
	Peak       memoryUse `json:"peak"`
	// PeakRSS is the kernel's high-water mark of the process's resident
	// set (VmHWM) at the end of the window: setup included.
	PeakRSS uint64 `json:"peakRssBytes"`
}

// tally groups counts by kind (kind returns "" to leave a request out),
// most frequent first, and returns them with their total.
func tally(counts map[requestKey]requestStat, kind func(requestKey) string) ([]count, int) {
	byKind := map[string]requestStat{}
	total := 0
	for k, st := range counts {
		if name := kind(k); name != "" {
			sum := byKind[name]
			byKind[name] = requestStat{N: sum.N + st.N, Time: sum.Time + st.Time}
			total += st.N
		}
	}
	out := make([]count, 0, len(byKind))
	for k, st := range byKind {
		mean := 0.0
		if st.N > 0 {
			mean = float64(st.Time.Microseconds()) / 1000 / float64(st.N)
		}
		out = append(out, count{Kind: k, Count: st.N, MeanMs: math.Round(mean*10) / 10})
	}
	slices.SortFunc(out, func(a, b count) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind))
	})
	return out, total
}

// writeKind names a write as "VERB resource", reads as "".
func writeKind(k requestKey) string {
	if !isWrite(k.Verb) {
		return ""
	}
	return k.Verb + " " + k.Resource
}

// readKind names a read as "VERB resource", writes as "".
func readKind(k requestKey) string {
	if isWrite(k.Verb) {
		return ""
	}
	return k.Verb + " " + k.Resource
}

// emptyKind names a PATCH whose body changes nothing as "PATCH resource",
// other requests as "".
func emptyKind(k requestKey) string {
	if !k.Empty {
		return ""
	}
	return k.Verb + " " + k.Resource
}

// failedKind names a request that got no 2xx response as "VERB resource
// code", others as "". Watches are left out: they end with no response on
// shutdown.
func failedKind(k requestKey) string {
	if k.Code/100 == 2 || k.Verb == "WATCH" {
		return ""
	}
	return k.Verb + " " + k.Resource + " " + strconv.Itoa(k.Code)
}

// writesIn counts the writes sent to namespace ns.
func writesIn(counts map[requestKey]requestStat, ns string) int {
	n := 0
	for k, st := range counts {
		if isWrite(k.Verb) && k.Namespace == ns {
			n += st.N
		}
	}
	return n
}

// printJSON writes r as indented JSON.
func printJSON(w io.Writer, r *result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// printText writes r for a person to read.
func printText(w io.Writer, r *result) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format+"\n", args...) }
	q := r.Requests
	p("sluice benchmark: %d Rollouts x %d replicas, steps 1 / 50%% / 100%%, each with pause duration 0", r.Rollouts, r.Replicas)
	p("environment: %s %s, GOMAXPROCS %d, %d CPUs", r.Env.GoVersion, r.Env.OSArch, r.Env.GOMAXPROCS, r.Env.CPUs)
	p("setup: %.1fs (control plane %.1fs, CRDs + manager %.1fs, workloads and rollouts %.1fs)",
		r.Setup.Total, r.Setup.Cluster, r.Setup.Manager, r.Setup.Workloads)
	p("")
	c := r.Completion
	p("(a) image change -> Rollout Completed, seconds (n=%d): median %.2f  p95 %.2f  min %.2f  max %.2f",
		c.N, c.Median, c.P95, c.Min, c.Max)
	p("    every Deployment updated and available %.2fs after the first change", r.DeploymentsAvailable)
	p("")
	p("(b) API writes sent by the sluice manager (POST/PUT/PATCH/DELETE), counted on its client transport")
	p("    window: first image change -> last Rollout Completed (%.2fs)", r.Window)
	p("    total %d = %.1f per Rollout; %d in the scenario's namespaces (per namespace: median %.0f, min %.0f, max %.0f)",
		q.Writes, q.PerRollout, q.RolloutWrites, q.ByNamespace.Median, q.ByNamespace.Min, q.ByNamespace.Max)
	printCounts(w, q.WriteKinds, float64(r.Rollouts))
	if len(q.EmptyPatches) > 0 {
		p("    of which empty patches (the body changes nothing, e.g. {\"spec\":{}}):")
		printCounts(w, q.EmptyPatches, float64(r.Rollouts))
	}
	if len(q.Failed) > 0 {
		p("    requests without a 2xx response (reads included):")
		printCounts(w, q.Failed, float64(r.Rollouts))
	}
	p("    reads in the window: %d (%.1f per Rollout)", q.Reads, float64(q.Reads)/float64(max(r.Rollouts, 1)))
	printCounts(w, q.ReadKinds, float64(r.Rollouts))
	p("    writes in the %.0fs after the window: %d", q.AfterSeconds, q.After)
	printCounts(w, q.AfterKinds, float64(r.Rollouts))
	for _, n := range q.Notes {
		p("    note: %s", n)
	}
	p("")
	p("controllers in the window (the manager's controller-runtime metrics):")
	for _, c := range r.Controllers {
		p("    %-12s %d worker(s), %d reconciles (%s), busy %.1fs = %.0f%% of the window, mean reconcile %.1fms, mean queue wait %.1fms, queue depth max %d",
			c.Name, c.Workers, total(c.Reconciles), byResult(c.Reconciles), c.BusySeconds, c.Utilization*100, c.MeanReconcileMs, c.MeanQueueWaitMs, c.MaxQueueDepth)
	}
	p("")
	m := r.Memory
	p("(c) memory: %s", m.What)
	p("    resident set (kernel): baseline %s, peak sampled %s, high-water mark %s", mib(m.Baseline.RSS), mib(m.Peak.RSS), mib(m.PeakRSS))
	p("    heap in use (HeapInuse): baseline %s, peak %s", mib(m.Baseline.HeapInuse), mib(m.Peak.HeapInuse))
	p("    live heap at the last GC: baseline %s, peak %s", mib(m.Baseline.HeapLive), mib(m.Peak.HeapLive))
	p("    total Go runtime memory (Sys): baseline %s, peak %s (%d samples every %dms)",
		mib(m.Baseline.Total), mib(m.Peak.Total), m.Samples, m.IntervalMs)
	p("    CPU time of that process in the window: %.1fs (%.0f%% of one core)", r.CPUSeconds, 100*r.CPUSeconds/max(r.Window, 0.001))
}

// printCounts writes one indented line per kind, with its rate per Rollout.
func printCounts(w io.Writer, counts []count, rollouts float64) {
	for _, c := range counts {
		_, _ = fmt.Fprintf(w, "      %6d  %6.1f/rollout  %6.1fms mean  %s\n", c.Count, float64(c.Count)/max(rollouts, 1), c.MeanMs, c.Kind)
	}
}

// printTimelines writes what each Rollout reported over time, in seconds
// from its image change.
func printTimelines(w io.Writer, names []string, changedAt map[string]time.Time, tl map[string][]transition) {
	for _, ns := range names {
		_, _ = fmt.Fprintf(w, "%s:\n", ns)
		for _, t := range tl[ns] {
			_, _ = fmt.Fprintf(w, "  %+8.3fs  %s\n", t.At.Sub(changedAt[ns]).Seconds(), t.State)
		}
	}
}

// total sums the values of m.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// byResult lists reconcile counts as "success 20, requeue_after 3".
func byResult(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// mib formats bytes in MiB.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// rowHeader is the header of the table that --row lines make up
// (docs/performance.md).
const rowHeader = "| Rollouts × replicas | image → Completed p50 / p95 / max | writes per release | uncached reads per release | peak RSS | CPU | busiest controller | deepest queue |\n|---|---|---|---|---|---|---|---|"

// printRow writes r as one line of the Markdown table under rowHeader.
func printRow(w io.Writer, r *result) {
	n := float64(max(r.Rollouts, 1))
	busiest, depth := controllerStats{}, 0
	for _, c := range r.Controllers {
		if c.Utilization > busiest.Utilization {
			busiest = c
		}
		depth = max(depth, c.MaxQueueDepth)
	}
	c := r.Completion
	_, _ = fmt.Fprintf(w, "| %d × %d | %.1f / %.1f / %.1f s | %.1f | %.1f | %s | %.1f s | %s %.0f%% | %d |\n",
		r.Rollouts, r.Replicas, c.Median, c.P95, c.Max, float64(r.Requests.Writes)/n, float64(r.Requests.Reads)/n,
		mib(max(r.Memory.PeakRSS, r.Memory.Peak.RSS)), r.CPUSeconds, busiest.Name, busiest.Utilization*100, depth)
}
