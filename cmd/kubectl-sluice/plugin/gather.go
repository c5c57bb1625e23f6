package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
	"github.com/sluice-dev/sluice/workload"
)

// snapshot reads everything `status` shows of the Rollout name. Only a
// Rollout that cannot be read is an error; what else cannot be read is
// reported in the snapshot.
func (s *session) snapshot(ctx context.Context, name string) (view.Snapshot, error) {
	ro, err := s.rollout(ctx, name)
	if err != nil {
		return view.Snapshot{}, err
	}
	snap := view.Snapshot{Rollout: ro, Now: time.Now()}
	br := &rolloutsv1beta1.BatchRelease{}
	switch err := s.c.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ro.Name}, br); {
	case err == nil:
		snap.BatchRelease = br
	case !apierrors.IsNotFound(err):
		snap.Problems = append(snap.Problems, fmt.Sprintf("batchrelease %s/%s: %v", ro.Namespace, ro.Name, err))
	}
	ws, err := workloadStatus(ctx, s, ro)
	switch {
	case errors.Is(err, workload.ErrNotFound):
		snap.WorkloadErr = fmt.Sprintf("%s %s/%s does not exist", ro.Spec.WorkloadRef.Kind, ro.Namespace, ro.Spec.WorkloadRef.Name)
	case err != nil:
		snap.WorkloadErr = err.Error()
	default:
		snap.Workload = ws
		pods, err := s.pods(ctx, ro.Namespace, ws.PodSelector)
		if err != nil {
			snap.Problems = append(snap.Problems, err.Error())
		}
		snap.Pods = pods
	}
	events, err := s.events(ctx, ro)
	if err != nil {
		snap.Problems = append(snap.Problems, err.Error())
	}
	snap.Events = events
	return snap, nil
}

// pods lists the pods of namespace that selector selects; none for a nil
// selector.
func (s *session) pods(ctx context.Context, namespace string, selector *metav1.LabelSelector) ([]corev1.Pod, error) {
	if selector == nil {
		return nil, nil
	}
	sel, err := podSelector(selector)
	if err != nil {
		return nil, err
	}
	list := &corev1.PodList{}
	if err := s.c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}

func podSelector(selector *metav1.LabelSelector) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("workload pod selector: %w", err)
	}
	return sel, nil
}

// events lists the events (events.k8s.io/v1) regarding ro.
func (s *session) events(ctx context.Context, ro *rolloutsv1beta1.Rollout) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	err := s.c.List(ctx, list, client.InNamespace(ro.Namespace),
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
