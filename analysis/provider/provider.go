// Package provider is the seam between a MetricGate's metrics and what
// measures them: one small interface, implemented by one package per kind
// (provider/prometheus, provider/web, provider/job) and built from the
// table in analysis/providers, the only place that names the kinds.
package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-dev/sluice/analysis/vars"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Provider takes one measurement of a metric.
type Provider interface {
	// Measure takes the measurement q describes. An error is a measurement
	// that could not be taken (an Error outcome); a Pending result is one
	// still being taken (a Job running), to ask for again later with the
	// same q.
	Measure(ctx context.Context, q Query) (Result, error)
}

// Query is one measurement to take.
type Query struct {
	// Gate is the MetricGate the metric belongs to.
	Gate *analysisv1alpha1.MetricGate
	// Metric is the metric measured.
	Metric *analysisv1alpha1.Metric
	// Rollout is the Rollout whose release is analysed.
	Rollout *rolloutsv1beta1.Rollout
	// Vars are the template variables' values.
	Vars vars.Values
	// Key identifies the measurement.
	Key Key
}

// Key identifies one measurement of a release: the same key is the same
// measurement, however often it is asked for.
type Key struct {
	// Rollout is the Rollout's name.
	Rollout string
	// Revision and RolloutID identify the release.
	Revision, RolloutID string
	// Step is the step analysed (0 for a background run).
	Step int32
	// Metric is the metric's name.
	Metric string
	// Index numbers the measurement within the run, from 1.
	Index int32
	// Started is when the run started (Unix seconds, as its status keeps
	// it): a run started afresh, because the release came back to the step
	// or was retried after an abort, measures anew rather than finding the
	// measurements of the run before it.
	Started int64
}

// Hash is a short digest of k, for names derived from it.
func (k Key) Hash() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%d\x00%s\x00%d\x00%d", k.Rollout, k.Revision, k.RolloutID, k.Step, k.Metric, k.Index, k.Started))
	return hex.EncodeToString(sum[:5])
}

// RunHash is a short digest of the run k belongs to: the Rollout, the
// release, the step and the run's start.
func (k Key) RunHash() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%d\x00%d", k.Rollout, k.Revision, k.RolloutID, k.Step, k.Started))
	return hex.EncodeToString(sum[:5])
}

// Result is what a measurement gave.
type Result struct {
	// Value is the result the conditions read: nil, bool, float64,
	// string, []any or map[string]any.
	Value any
	// Pending is true while the measurement is still being taken.
	Pending bool
}

// SecretReader reads a Secret of a MetricGate's namespace.
type SecretReader func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
