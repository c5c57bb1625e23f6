package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/snapshot"
)

// errNoRollout is returned for a Rollout that does not exist.
var errNoRollout = errors.New("no such rollout")

// eventCache keeps the events of one live page between reads.
type eventCache struct {
	read   time.Time
	events []eventsv1.Event
	err    error
}

// read gathers what the page of the Rollout key draws, as kubectl sluice
// status does (observability/snapshot). Only a Rollout that cannot be read
// is an error; what else cannot be read becomes a problem line. ec, when
// not nil, reads the events at most every EventsInterval.
func (s *Server) read(ctx context.Context, key types.NamespacedName, ec *eventCache) (Input, error) {
	ro := &rolloutsv1beta1.Rollout{}
	if err := s.Client.Get(ctx, key, ro); err != nil {
		if apierrors.IsNotFound(err) {
			return Input{}, errNoRollout
		}
		return Input{}, fmt.Errorf("reading rollout %s: %w", key, err)
	}
	in := snapshot.Reader{Client: s.Client, Workloads: s.Workloads}.Read(ctx, ro, time.Now())
	if ec == nil {
		ec = &eventCache{}
	}
	if ec.read.IsZero() || in.Now.Sub(ec.read) >= s.eventsInterval() {
		// Events are not cached by the manager: read them from the API
		// server.
		ec.events, ec.err = snapshot.Events(ctx, s.APIReader, ro)
		ec.read = in.Now
	}
	in.Events = ec.events
	if ec.err != nil {
		in.Problems = append(in.Problems, ec.err.Error())
	}
	return in, nil
}
