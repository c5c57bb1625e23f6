package service

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-dev/sluice/traffic/handback"
)

func TestNarrowedTo(t *testing.T) {
	record := func(value, applied string) *handback.Record {
		r := &handback.Record{Rollout: "web", Value: []byte(value)}
		if applied != "" {
			r.Applied = []byte(applied)
		}
		return r
	}
	const orig, narrowedV1 = `{"app":"web"}`, `{"app":"web","pod-template-hash":"v1"}`
	tests := []struct {
		name      string
		selector  map[string]string
		rec       *handback.Record
		finishing []string
		want      bool
	}{
		{"narrowed to the old revision, the workload finishes on the new one: restored",
			map[string]string{"app": "web", "pod-template-hash": "v1"}, record(orig, narrowedV1), []string{"v2", "v2"}, false},
		{"narrowed to the revision the workload goes back to (a rollback): kept",
			map[string]string{"app": "web", "pod-template-hash": "v1"}, record(orig, narrowedV1), []string{"v1", "v1"}, true},
		{"the workload is gone: restored",
			map[string]string{"app": "web", "pod-template-hash": "v1"}, record(orig, narrowedV1), nil, false},
		{"someone changed the revision key since: restored",
			map[string]string{"app": "web", "pod-template-hash": "v9"}, record(orig, narrowedV1), []string{"v1"}, false},
		{"a record of an earlier sluice, without what it applied: restored",
			map[string]string{"app": "web", "pod-template-hash": "v1"}, record(orig, ""), []string{"v1"}, false},
		{"nothing added (the selector already required the revision): restored",
			map[string]string{"app": "web", "pod-template-hash": "v1"}, record(narrowedV1, narrowedV1), []string{"v1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: tt.selector}}
			got, err := narrowedTo(svc, tt.rec, tt.finishing)
			if err != nil || got != tt.want {
				t.Fatalf("narrowedTo = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
