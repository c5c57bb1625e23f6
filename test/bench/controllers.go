package main

import (
	"math"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of controller-runtime's in-process registry that the benchmark
// reads; the manager runs in this process, so they describe its controllers.
const (
	metricReconciles    = "controller_runtime_reconcile_total"           // by controller and result
	metricReconcileTime = "controller_runtime_reconcile_time_seconds"    // by controller
	metricQueueWait     = "workqueue_queue_duration_seconds"             // by name (the controller)
	metricWorkers       = "controller_runtime_max_concurrent_reconciles" // by controller
	metricQueueDepth    = "workqueue_depth"                              // by name (the controller)
)

// readQueueDepths reads how many items wait in each controller's work
// queue now.
func readQueueDepths() map[string]float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != metricQueueDepth {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// metricValues maps "metric/controller[/result]" (plus "/sum" and
// "/count" for histograms) to a value. Controller names, which
// controller-runtime validates as DNS-like names, never contain "/".
type metricValues map[string]float64

// readControllerMetrics reads the reconcile and work-queue metrics of every
// controller in the process.
func readControllerMetrics() (metricValues, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	out := metricValues{}
	for _, f := range families {
		name := f.GetName()
		switch name {
		case metricReconciles, metricReconcileTime, metricQueueWait, metricWorkers:
		default:
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			controller := labels["controller"]
			if controller == "" {
				controller = labels["name"]
			}
			key := name + "/" + controller
			switch name {
			case metricReconciles:
				out[key+"/"+labels["result"]] = m.GetCounter().GetValue()
			case metricWorkers:
				out[key] = m.GetGauge().GetValue()
			default:
				out[key+"/sum"] = m.GetHistogram().GetSampleSum()
				out[key+"/count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}

// controllerStats is what one controller did in the window.
type controllerStats struct {
	Name string `json:"name"`
	// Workers is MaxConcurrentReconciles.
	Workers int `json:"workers"`
	// Reconciles counts reconciles by result (success, error, requeue,
	// requeue_after).
	Reconciles map[string]int `json:"reconciles"`
	// BusySeconds is the summed duration of its reconciles; Utilization is
	// that over the window and the workers.
	BusySeconds float64 `json:"busySeconds"`
	Utilization float64 `json:"utilization"`
	// MeanReconcileMs and MeanQueueWaitMs are means per reconcile and per
	// item taken off the work queue.
	MeanReconcileMs float64 `json:"meanReconcileMs"`
	MeanQueueWaitMs float64 `json:"meanQueueWaitMs"`
	// MaxQueueDepth is the most items seen waiting in its work queue.
	MaxQueueDepth int `json:"maxQueueDepth"`
}

// controllerDeltas computes what each controller did between two readings
// taken window seconds apart, in name order.
func controllerDeltas(before, after metricValues, window float64) []controllerStats {
	byName := map[string]*controllerStats{}
	get := func(name string) *controllerStats {
		if byName[name] == nil {
			byName[name] = &controllerStats{Name: name, Reconciles: map[string]int{}}
		}
		return byName[name]
	}
	for key, v := range after {
		parts := strings.Split(key, "/")
		if len(parts) < 2 || parts[1] == "" {
			continue
		}
		d := v - before[key]
		switch {
		case parts[0] == metricReconciles && len(parts) == 3 && d > 0:
			get(parts[1]).Reconciles[parts[2]] = int(math.Round(d))
		case parts[0] == metricWorkers:
			get(parts[1]).Workers = int(v)
		}
	}
	for _, c := range byName {
		busy := after[metricReconcileTime+"/"+c.Name+"/sum"] - before[metricReconcileTime+"/"+c.Name+"/sum"]
		n := after[metricReconcileTime+"/"+c.Name+"/count"] - before[metricReconcileTime+"/"+c.Name+"/count"]
		wait := after[metricQueueWait+"/"+c.Name+"/sum"] - before[metricQueueWait+"/"+c.Name+"/sum"]
		waits := after[metricQueueWait+"/"+c.Name+"/count"] - before[metricQueueWait+"/"+c.Name+"/count"]
		c.BusySeconds = round3(busy)
		if window > 0 {
			c.Utilization = round3(busy / window / float64(max(c.Workers, 1)))
		}
		if n > 0 {
			c.MeanReconcileMs = round3(busy / n * 1000)
		}
		if waits > 0 {
			c.MeanQueueWaitMs = round3(wait / waits * 1000)
		}
	}
	out := make([]controllerStats, 0, len(byName))
	for _, c := range byName {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b controllerStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// round3 rounds to three decimals, for readable JSON.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
