package main

import (
	"math"
	"testing"
)

func TestPercentile_interpolatesBetweenClosestRanks(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{name: "one value", sorted: []float64{3}, p: 95, want: 3},
		{name: "median of even count averages the middle two", sorted: []float64{1, 2, 3, 4}, p: 50, want: 2.5},
		{name: "median of odd count is the middle", sorted: []float64{1, 2, 10}, p: 50, want: 2},
		{name: "p95 of ten values lies between the two largest", sorted: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, p: 95, want: 9.55},
		{name: "p0 is the minimum", sorted: []float64{4, 5, 6}, p: 0, want: 4},
		{name: "p100 is the maximum", sorted: []float64{4, 5, 6}, p: 100, want: 6},
		{name: "p above 100 is clamped", sorted: []float64{4, 5, 6}, p: 150, want: 6},
		{name: "p below 0 is clamped", sorted: []float64{4, 5, 6}, p: -1, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentile_noValues_isNaN(t *testing.T) {
	if got := percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile(nil, 50) = %v, want NaN", got)
	}
}

func TestSummarize_sortsACopy(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   summary
	}{
		{name: "no values", values: nil, want: summary{}},
		{name: "unsorted values", values: []float64{5, 1, 3}, want: summary{N: 3, Min: 1, Median: 3, P95: 4.8, Max: 5}},
		{name: "equal values", values: []float64{2, 2}, want: summary{N: 2, Min: 2, Median: 2, P95: 2, Max: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			got := summarize(in)
			if got.N != tt.want.N || math.Abs(got.Min-tt.want.Min) > 1e-9 || math.Abs(got.Median-tt.want.Median) > 1e-9 ||
				math.Abs(got.P95-tt.want.P95) > 1e-9 || math.Abs(got.Max-tt.want.Max) > 1e-9 {
				t.Errorf("summarize(%v) = %+v, want %+v", tt.values, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.values[i] {
					t.Fatalf("summarize reordered its input: %v", in)
				}
			}
		})
	}
}
