package batch

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func ios(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

func TestDesiredUpdated(t *testing.T) {
	tests := []struct {
		name    string
		step    *intstr.IntOrString
		total   int32
		want    int32
		wantErr bool
	}{
		{name: "int step", step: ios("1"), total: 10, want: 1},
		{name: "percent exact", step: ios("50%"), total: 10, want: 5},
		{name: "percent rounds up", step: ios("20%"), total: 3, want: 1},
		{name: "percent rounds up 40 of 3", step: ios("40%"), total: 3, want: 2},
		{name: "percent rounds up 90 of 3", step: ios("90%"), total: 3, want: 3},
		{name: "one percent of many", step: ios("1%"), total: 1000, want: 10},
		{name: "one percent of few is one", step: ios("1%"), total: 5, want: 1},
		{name: "hundred percent", step: ios("100%"), total: 7, want: 7},
		{name: "int capped at total", step: ios("12"), total: 10, want: 10},
		{name: "nil means all", step: nil, total: 4, want: 4},
		{name: "zero replicas", step: ios("50%"), total: 0, want: 0},
		{name: "bad percent", step: ios("x%"), total: 10, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DesiredUpdated(tt.step, tt.total)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DesiredUpdated() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("DesiredUpdated() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTolerated(t *testing.T) {
	tests := []struct {
		name      string
		threshold *intstr.IntOrString
		updated   int32
		want      int32
	}{
		{"nil tolerates none", nil, 10, 0},
		{"int", ios("2"), 10, 2},
		{"int capped", ios("20"), 10, 10},
		{"percent rounds up", ios("20%"), 3, 1},
		{"percent of ten", ios("20%"), 10, 2},
		{"no updated pods", ios("50%"), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Tolerated(tt.threshold, tt.updated)
			if err != nil || got != tt.want {
				t.Fatalf("Tolerated() = %d, %v, want %d", got, err, tt.want)
			}
		})
	}
}

func TestStepReady(t *testing.T) {
	tests := []struct {
		name                               string
		desired, updated, ready, tolerated int32
		want                               bool
	}{
		{"all ready", 5, 5, 5, 0, true},
		{"not all updated", 5, 4, 4, 0, false},
		{"one unready, none tolerated", 5, 5, 4, 0, false},
		{"one unready, one tolerated", 5, 5, 4, 1, true},
		{"tolerance never allows zero ready", 1, 1, 0, 1, false},
		{"nothing desired", 0, 0, 0, 0, true},
		{"more updated than desired", 2, 3, 3, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StepReady(tt.desired, tt.updated, tt.ready, tt.tolerated); got != tt.want {
				t.Fatalf("StepReady() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRollingBounds(t *testing.T) {
	tests := []struct {
		name                       string
		surge, unavailable         *intstr.IntOrString
		replicas                   int32
		wantSurge, wantUnavailable int32
		wantErr                    bool
	}{
		{name: "defaults of ten", replicas: 10, wantSurge: 3, wantUnavailable: 2},
		{name: "defaults of one", replicas: 1, wantSurge: 1, wantUnavailable: 0},
		{name: "ints", surge: ios("1"), unavailable: ios("0"), replicas: 10, wantSurge: 1, wantUnavailable: 0},
		{name: "both zero becomes one unavailable", surge: ios("0"), unavailable: ios("0"), replicas: 10, wantSurge: 0, wantUnavailable: 1},
		{name: "percent zero rounds to zero then one", surge: ios("0%"), unavailable: ios("5%"), replicas: 10, wantSurge: 0, wantUnavailable: 1},
		{name: "bad", surge: ios("x%"), replicas: 10, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, u, err := RollingBounds(tt.surge, tt.unavailable, tt.replicas)
			if (err != nil) != tt.wantErr {
				t.Fatalf("RollingBounds() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (s != tt.wantSurge || u != tt.wantUnavailable) {
				t.Fatalf("RollingBounds() = %d, %d, want %d, %d", s, u, tt.wantSurge, tt.wantUnavailable)
			}
		})
	}
}
