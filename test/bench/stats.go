package main

import (
	"math"
	"slices"
)

// summary describes a sample of values.
type summary struct {
	// N is the number of values.
	N int `json:"n"`
	// Min, Median, P95 and Max are order statistics of the values.
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// summarize computes the summary of values; it is zero for no values.
func summarize(values []float64) summary {
	if len(values) == 0 {
		return summary{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return summary{
		N:      len(s),
		Min:    s[0],
		Median: percentile(s, 50),
		P95:    percentile(s, 95),
		Max:    s[len(s)-1],
	}
}

// percentile returns the p-th percentile (0 <= p <= 100) of sorted values,
// interpolating linearly between the two closest ranks (the method of
// numpy's default and of most spreadsheets). It is NaN for no values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	p = math.Min(math.Max(p, 0), 100)
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}
