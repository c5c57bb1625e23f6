// Package snapshot reads, at one moment, everything the views of a Rollout
// draw (kubectl sluice status and the web view): its BatchRelease, its
// workload and the workload's pods, the events regarding it and the
// measurements of the MetricGates bound to it. Both views read through it,
// so they show the same things and report what they could not read alike.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/series"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/workload"
)

// Snapshot is what the views of one Rollout draw, read at one moment.
type Snapshot struct {
	// Rollout is the Rollout.
	Rollout *rolloutsv1beta1.Rollout
	// BatchRelease is the Rollout's BatchRelease, nil when there is none.
	BatchRelease *rolloutsv1beta1.BatchRelease
	// Workload is the workload as sluice sees it, nil when it could not
	// be read; WorkloadErr then says why.
	Workload    *workload.Status
	WorkloadErr string
	// WorkloadAnnotations are the annotations of the workload, where the
	// GitOps adapter names the commit being released.
	WorkloadAnnotations map[string]string
	// Pods are the pods the workload's selector selects.
	Pods []corev1.Pod
	// Events are the events regarding the Rollout.
	Events []eventsv1.Event
	// Analysis are the measurements the MetricGates bound to the Rollout
	// kept of its current release (analysis/series), one series per gate,
	// step and metric.
	Analysis []series.Series
	// Problems are what could not be read, one line each.
	Problems []string
	// Now is when the snapshot was taken; ages count from it.
	Now time.Time
}

// Reader reads snapshots.
type Reader struct {
	// Client reads BatchReleases, workloads, pods and MetricGates.
	Client client.Client
	// Workloads makes the adapter that reads a Rollout's workload.
	Workloads workload.Factory
}

// Read reads the snapshot of ro at now, all but its events (Events reads
// them). What cannot be read becomes a problem line (or WorkloadErr), never
// an error.
func (r Reader) Read(ctx context.Context, ro *rolloutsv1beta1.Rollout, now time.Time) Snapshot {
	s := Snapshot{Rollout: ro, Now: now}
	br := &rolloutsv1beta1.BatchRelease{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ro.Name}, br); {
	case err == nil:
		s.BatchRelease = br
	case !apierrors.IsNotFound(err):
		s.Problems = append(s.Problems, fmt.Sprintf("batchrelease %s/%s: %v", ro.Namespace, ro.Name, err))
	}
	r.readWorkload(ctx, ro, &s)
	gates := &analysisv1alpha1.MetricGateList{}
	switch err := r.Client.List(ctx, gates, client.InNamespace(ro.Namespace)); {
	case err == nil:
		s.Analysis = series.Of(gates.Items, ro)
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		// sluice's analysis is not installed: nothing to show.
	default:
		s.Problems = append(s.Problems, fmt.Sprintf("metricgates in %s: %v", ro.Namespace, err))
	}
	return s
}

// readWorkload reads the workload's status, annotations and pods into s.
func (r Reader) readWorkload(ctx context.Context, ro *rolloutsv1beta1.Rollout, s *Snapshot) {
	ref := ro.Spec.WorkloadRef
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}, obj); err == nil {
			s.WorkloadAnnotations = obj.Annotations
		}
	}
	ws, err := r.WorkloadStatus(ctx, ro)
	switch {
	case errors.Is(err, workload.ErrNotFound):
		s.WorkloadErr = fmt.Sprintf("%s %s/%s does not exist", ref.Kind, ro.Namespace, ref.Name)
		return
	case err != nil:
		s.WorkloadErr = err.Error()
		return
	}
	s.Workload = ws
	pods, err := Pods(ctx, r.Client, ro.Namespace, ws.PodSelector)
	if err != nil {
		s.Problems = append(s.Problems, err.Error())
	}
	s.Pods = pods
}

// WorkloadStatus reads ro's workload the way sluice does, through the
// workload adapter of its kind.
func (r Reader) WorkloadStatus(ctx context.Context, ro *rolloutsv1beta1.Rollout) (*workload.Status, error) {
	a, err := r.Workloads(r.Client, r.Client, workload.Target{Namespace: ro.Namespace, Ref: ro.Spec.WorkloadRef, Style: coverage.Style(ro)})
	if err != nil {
		return nil, err
	}
	return a.Status(ctx)
}

// Pods lists the pods of namespace that selector selects; none for a nil
// selector.
func Pods(ctx context.Context, c client.Reader, namespace string, selector *metav1.LabelSelector) ([]corev1.Pod, error) {
	if selector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("workload pod selector: %w", err)
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}

// Events lists the events (events.k8s.io/v1) regarding ro, through c: the
// field selector on regarding.kind and regarding.name needs either the
// API server or a cache indexed on those fields.
func Events(ctx context.Context, c client.Reader, ro *rolloutsv1beta1.Rollout) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	err := c.List(ctx, list, client.InNamespace(ro.Namespace),
		client.MatchingFields{"regarding.kind": "Rollout", "regarding.name": ro.Name})
	if err != nil {
		return nil, fmt.Errorf("listing events of rollout %s/%s: %w", ro.Namespace, ro.Name, err)
	}
	out := list.Items[:0]
	for _, e := range list.Items {
		if e.Regarding.UID == "" || e.Regarding.UID == ro.UID {
			out = append(out, e)
		}
	}
	return out, nil
}
