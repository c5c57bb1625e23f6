package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/support"
	"github.com/sluice-dev/sluice/workload"
)

// errNoRollout is returned for a Rollout that does not exist.
var errNoRollout = errors.New("no such rollout")

// eventCache keeps the events of one live page between reads.
type eventCache struct {
	read   time.Time
	events []eventsv1.Event
	err    error
}

// read gathers what the page of the Rollout key draws. Only a Rollout that
// cannot be read is an error; what else cannot be read becomes a problem
// line. ec, when not nil, reads the events at most every EventsInterval.
func (s *Server) read(ctx context.Context, key types.NamespacedName, ec *eventCache) (Input, error) {
	ro := &rolloutsv1beta1.Rollout{}
	if err := s.Client.Get(ctx, key, ro); err != nil {
		if apierrors.IsNotFound(err) {
			return Input{}, errNoRollout
		}
		return Input{}, fmt.Errorf("reading rollout %s: %w", key, err)
	}
	in := Input{Rollout: ro, Now: time.Now()}
	br := &rolloutsv1beta1.BatchRelease{}
	switch err := s.Client.Get(ctx, key, br); {
	case err == nil:
		in.BatchRelease = br
	case !apierrors.IsNotFound(err):
		in.Problems = append(in.Problems, fmt.Sprintf("batchrelease: %v", err))
	}
	s.readWorkload(ctx, ro, &in)
	if ec == nil {
		ec = &eventCache{}
	}
	if ec.read.IsZero() || in.Now.Sub(ec.read) >= s.eventsInterval() {
		ec.events, ec.err = s.events(ctx, ro)
		ec.read = in.Now
	}
	in.Events = ec.events
	if ec.err != nil {
		in.Problems = append(in.Problems, ec.err.Error())
	}
	return in, nil
}

// readWorkload reads the workload's status, annotations and pods into in.
func (s *Server) readWorkload(ctx context.Context, ro *rolloutsv1beta1.Rollout, in *Input) {
	ref := ro.Spec.WorkloadRef
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}, meta); err == nil {
			in.WorkloadAnnotations = meta.Annotations
		}
	}
	r, err := s.Workloads(s.Client, s.Client, workload.Target{Namespace: ro.Namespace, Ref: ref, Style: support.Style(ro)})
	if err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("workload %s/%s: %v", ref.Kind, ref.Name, err))
		return
	}
	ws, err := r.Status(ctx)
	if err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("workload %s/%s: %v", ref.Kind, ref.Name, err))
		return
	}
	in.Workload = ws
	if ws.PodSelector == nil {
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(ws.PodSelector)
	if err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("workload pod selector: %v", err))
		return
	}
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ro.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("pods: %v", err))
		return
	}
	in.Pods = pods.Items
}

// events lists the events (events.k8s.io/v1) regarding ro.
func (s *Server) events(ctx context.Context, ro *rolloutsv1beta1.Rollout) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	err := s.APIReader.List(ctx, list, client.InNamespace(ro.Namespace),
		client.MatchingFields{"regarding.kind": "Rollout", "regarding.name": ro.Name})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	out := list.Items[:0]
	for _, e := range list.Items {
		if e.Regarding.UID == "" || e.Regarding.UID == ro.UID {
			out = append(out, e)
		}
	}
	return out, nil
}
