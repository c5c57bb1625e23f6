package main

import (
	"reflect"
	"testing"
)

func TestControllerDeltas_reportsTheWindowOnly(t *testing.T) {
	before := metricValues{
		metricReconciles + "/rollout/success":    10,
		metricReconcileTime + "/rollout/sum":     1,
		metricReconcileTime + "/rollout/count":   10,
		metricQueueWait + "/rollout/sum":         0.5,
		metricQueueWait + "/rollout/count":       10,
		metricWorkers + "/rollout":               1,
		metricReconciles + "/batchrelease/error": 2,
	}
	after := metricValues{
		metricReconciles + "/rollout/success":       30,
		metricReconciles + "/rollout/requeue_after": 0,
		metricReconcileTime + "/rollout/sum":        5,
		metricReconcileTime + "/rollout/count":      30,
		metricQueueWait + "/rollout/sum":            4.5,
		metricQueueWait + "/rollout/count":          30,
		metricWorkers + "/rollout":                  1,
		metricReconciles + "/batchrelease/error":    2,
		metricWorkers + "/batchrelease":             4,
		metricReconcileTime + "/batchrelease/sum":   2,
		metricReconcileTime + "/batchrelease/count": 10,
	}
	want := []controllerStats{
		{Name: "batchrelease", Workers: 4, Reconciles: map[string]int{}, BusySeconds: 2, Utilization: 0.05, MeanReconcileMs: 200},
		{Name: "rollout", Workers: 1, Reconciles: map[string]int{"success": 20}, BusySeconds: 4, Utilization: 0.4,
			MeanReconcileMs: 200, MeanQueueWaitMs: 200},
	}
	if got := controllerDeltas(before, after, 10); !reflect.DeepEqual(got, want) {
		t.Errorf("controllerDeltas =\n%+v\nwant\n%+v", got, want)
	}
}

func TestMaxMemory_isFieldWise(t *testing.T) {
	a := memoryUse{HeapInuse: 5, HeapLive: 1, Total: 9}
	b := memoryUse{HeapInuse: 3, HeapLive: 2, Total: 10}
	if got, want := maxMemory(a, b), (memoryUse{HeapInuse: 5, HeapLive: 2, Total: 10}); got != want {
		t.Errorf("maxMemory = %+v, want %+v", got, want)
	}
}
