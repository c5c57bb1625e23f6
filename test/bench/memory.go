package main

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
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
	return memoryUse{HeapInuse: v(0) + v(1), HeapLive: v(2), Total: v(3)}
}

// maxMemory returns the field-wise maximum of a and b.
func maxMemory(a, b memoryUse) memoryUse {
	return memoryUse{HeapInuse: max(a.HeapInuse, b.HeapInuse), HeapLive: max(a.HeapLive, b.HeapLive), Total: max(a.Total, b.Total)}
}

// memorySampler records the peak Go memory of the process between start
// and stop.
type memorySampler struct {
	baseline memoryUse
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex // guards peak and samples
	peak    memoryUse
	samples int
}

// startSampling collects garbage, takes the baseline reading, and then
// samples every interval until stop.
func startSampling(interval time.Duration) *memorySampler {
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	m := &memorySampler{baseline: readMemory(), cancel: cancel}
	m.peak = m.baseline
	m.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				m.record(readMemory())
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

// stop ends sampling, takes a last reading, and returns the baseline, the
// peak and the number of samples.
func (m *memorySampler) stop() (baseline, peak memoryUse, samples int) {
	m.cancel()
	m.wg.Wait()
	m.record(readMemory())
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.baseline, m.peak, m.samples
}
