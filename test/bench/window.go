package main

import (
	"fmt"
	"time"
)

// window is what the benchmark recorded between the first image change and
// the last completed release, plus what came just after.
type window struct {
	// first is the first image change, end the moment the last release
	// was seen completed, deploymentsAvailable when every Deployment was
	// seen fully updated and available.
	first, end, deploymentsAvailable time.Time
	// changedAt and done are, per namespace, when the image change was sent
	// and when the watch delivered the completed release.
	changedAt, done map[string]time.Time
	// process says whose memory and CPU the window measured.
	process string
	// inWindow counts the manager's requests in the window, after those of
	// the settle period that followed.
	inWindow, after map[requestKey]requestStat
	// metricsBefore and metricsAfter are controller-runtime's metrics at
	// the start and the end of the window.
	metricsBefore, metricsAfter metricValues
	// baseline, peak and samples are the memory sampler's results.
	baseline, peak memoryUse
	samples        int
	// depths are the deepest each work queue was seen in the window.
	depths map[string]float64
	// cpu is the CPU seconds the process used in the window; peakRSS the
	// kernel's high-water mark of its resident set at the end of it.
	cpu     float64
	peakRSS uint64
	// timelines are what each Rollout reported, per namespace.
	timelines map[string][]transition
}

// fill computes the results of the window into res; namespaces are the
// scenario's, one Rollout each, and settle the period counted in after.
func (w *window) fill(res *result, namespaces []string, settle time.Duration) {
	var seconds, perNamespace []float64
	q := &res.Requests
	for _, ns := range namespaces {
		r := rolloutResult{Namespace: ns, Seconds: w.done[ns].Sub(w.changedAt[ns]).Seconds(), Writes: writesIn(w.inWindow, ns)}
		res.PerRun = append(res.PerRun, r)
		seconds = append(seconds, r.Seconds)
		perNamespace = append(perNamespace, float64(r.Writes))
		q.RolloutWrites += r.Writes
	}
	res.Completion = summarize(seconds)
	res.Window = w.end.Sub(w.first).Seconds()
	res.DeploymentsAvailable = w.deploymentsAvailable.Sub(w.first).Seconds()
	res.Controllers = controllerDeltas(w.metricsBefore, w.metricsAfter, res.Window)
	for i := range res.Controllers {
		res.Controllers[i].MaxQueueDepth = int(w.depths[res.Controllers[i].Name])
	}
	res.CPUSeconds = round3(w.cpu)
	q.WriteKinds, q.Writes = tally(w.inWindow, writeKind)
	q.ReadKinds, q.Reads = tally(w.inWindow, readKind)
	q.Failed, _ = tally(w.inWindow, failedKind)
	q.EmptyPatches, _ = tally(w.inWindow, emptyKind)
	q.AfterKinds, q.After = tally(w.after, writeKind)
	q.AfterSeconds = settle.Seconds()
	q.PerRollout = float64(q.Writes) / float64(max(len(namespaces), 1))
	q.ByNamespace = summarize(perNamespace)
	if other := q.Writes - q.RolloutWrites; other > 0 {
		q.Notes = append(q.Notes, fmt.Sprintf("%d writes went outside the scenario's namespaces", other))
	}
	res.Memory = memoryReport{
		What: fmt.Sprintf("memory of %s (the control plane's processes are not counted); baseline read "+
			"just before the first image change, peaks sampled from runtime/metrics every %s until "+
			"the last Rollout Completed", w.process, sampleInterval),
		IntervalMs: int(sampleInterval / time.Millisecond), Samples: w.samples, Baseline: w.baseline, Peak: w.peak,
		PeakRSS: w.peakRSS,
	}
}
