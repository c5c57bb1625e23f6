package main

import (
	"context"
	"maps"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Runtime metrics the sampler reads. Heap in use is what MemStats calls
// HeapInuse (objects plus unused space of in-use spans); total is Sys,
// everything the Go runtime has mapped.
const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapUnused  = "/memory/classes/heap/unused:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
	metricTotal       = "/memory/classes/total:bytes"
)

// memoryUse is one reading of the process's Go memory, in bytes.
type memoryUse struct {
	// HeapInuse is the heap in use (MemStats.HeapInuse).
	HeapInuse uint64 `json:"heapInuseBytes"`
	// HeapLive is the heap marked live by the last GC.
	HeapLive uint64 `json:"heapLiveBytes"`
	// Total is all memory mapped by the Go runtime (MemStats.Sys).
	Total uint64 `json:"totalBytes"`
	// RSS is the resident set size of the process as the kernel reports it
	// (/proc/self/statm), Go heap, stacks, binary and C allocations alike.
	RSS uint64 `json:"rssBytes"`
}

// readMemory takes one reading through runtime/metrics, which does not stop
// the world.
func readMemory() memoryUse {
	samples := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapUnused}, {Name: metricHeapLive}, {Name: metricTotal}}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return memoryUse{HeapInuse: v(0) + v(1), HeapLive: v(2), Total: v(3), RSS: residentBytes()}
}

// residentBytes is the process's resident set size from /proc/self/statm
// (0 where there is none).
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize()) //nolint:gosec // the page size is positive
}

// peakResidentBytes is the process's highest resident set size so far, as
// the kernel keeps it (VmHWM of /proc/self/status).
func peakResidentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuSeconds is the CPU time the process has used so far, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// maxMemory returns the field-wise maximum of a and b.
func maxMemory(a, b memoryUse) memoryUse {
	return memoryUse{HeapInuse: max(a.HeapInuse, b.HeapInuse), HeapLive: max(a.HeapLive, b.HeapLive), Total: max(a.Total, b.Total), RSS: max(a.RSS, b.RSS)}
}

// memorySampler records the peak memory of the manager's process between
// start and stop.
type memorySampler struct {
	side     managerSide
	baseline memoryUse
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex // guards peak, depth and samples
	peak    memoryUse
	depth   map[string]float64 // the deepest each work queue was seen
	samples int
}

// startSampling collects garbage, takes the baseline reading, and then
// samples every interval until stop.
func startSampling(side managerSide, interval time.Duration) *memorySampler {
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	m := &memorySampler{side: side, baseline: side.memory(), cancel: cancel, depth: map[string]float64{}}
	m.peak = m.baseline
	m.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				m.record(side.memory())
				m.recordDepths(side.queueDepths())
			}
		}
	})
	return m
}

// record folds a reading into the peak.
func (m *memorySampler) record(u memoryUse) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peak = maxMemory(m.peak, u)
	m.samples++
}

// recordDepths folds a reading of the work queues' depths into the peaks.
func (m *memorySampler) recordDepths(d map[string]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, v := range d {
		m.depth[name] = max(m.depth[name], v)
	}
}

// depths returns the deepest each work queue was seen.
func (m *memorySampler) depths() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.depth)
}

// stop ends sampling, takes a last reading, and returns the baseline, the
// peak and the number of samples.
func (m *memorySampler) stop() (baseline, peak memoryUse, samples int) {
	m.cancel()
	m.wg.Wait()
	m.record(m.side.memory())
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.baseline, m.peak, m.samples
}
