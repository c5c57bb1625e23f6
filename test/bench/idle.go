package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// idleResult is what the manager did while every Rollout stayed Healthy
// and nothing changed.
type idleResult struct {
	Rollouts int     `json:"rollouts"`
	Seconds  float64 `json:"seconds"`
	// Writes must be 0: nothing changed, so nothing should be written.
	Writes     int     `json:"writes"`
	WriteKinds []count `json:"writeKinds"`
	Reads      int     `json:"reads"`
	ReadKinds  []count `json:"readKinds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// RSS is the resident set at the end; PeakRSS the kernel's high-water
	// mark, setup included.
	RSS     uint64 `json:"rssBytes"`
	PeakRSS uint64 `json:"peakRssBytes"`
	// Process says whose CPU and memory these are.
	Process string `json:"process"`
	// Reconciles is what each controller did in the period.
	Controllers []controllerStats `json:"controllers"`
}

// measureIdle counts the manager's requests, CPU and memory for d while
// nothing changes.
func measureIdle(ctx context.Context, side managerSide, n int, d time.Duration) (*idleResult, error) {
	before, err := side.controllerMetrics()
	if err != nil {
		return nil, err
	}
	cpu := side.cpuSeconds()
	side.openWindow()
	began := time.Now()
	sleep(ctx, d)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	counts := side.snapshot()
	after, err := side.controllerMetrics()
	if err != nil {
		return nil, err
	}
	res := &idleResult{Rollouts: n, Seconds: round3(time.Since(began).Seconds()), CPUSeconds: round3(side.cpuSeconds() - cpu),
		RSS: side.memory().RSS, PeakRSS: side.peakRSS(), Process: side.process()}
	res.WriteKinds, res.Writes = tally(counts, writeKind)
	res.ReadKinds, res.Reads = tally(counts, readKind)
	res.Controllers = controllerDeltas(before, after, res.Seconds)
	return res, nil
}

// printIdle writes r for a person to read.
func printIdle(w io.Writer, r *idleResult) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format+"\n", args...) }
	p("sluice benchmark, idle: %d Rollouts Healthy, nothing changed for %.0fs", r.Rollouts, r.Seconds)
	p("    writes: %d (should be 0)", r.Writes)
	printCounts(w, r.WriteKinds, float64(r.Rollouts))
	p("    reads (watches included as one each): %d", r.Reads)
	printCounts(w, r.ReadKinds, float64(r.Rollouts))
	p("    CPU %.1fs (%.1f%% of one core); resident set %s now, high-water mark %s (setup included), of %s",
		r.CPUSeconds, 100*r.CPUSeconds/max(r.Seconds, 0.001), mib(r.RSS), mib(r.PeakRSS), r.Process)
	for _, c := range r.Controllers {
		p("    %-12s %d reconciles (%s), busy %.1fs", c.Name, total(c.Reconciles), byResult(c.Reconciles), c.BusySeconds)
	}
}

// startCPUProfile starts a CPU profile into path (nothing when empty) and
// returns what stops it.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// writeHeapProfile writes a heap profile into path (nothing when empty),
// after a GC so that it shows what is live.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}
