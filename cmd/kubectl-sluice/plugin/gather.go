package plugin

import (
	"context"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
	"github.com/sluice-dev/sluice/observability/snapshot"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// snapshot reads everything `status` shows of the Rollout name, as the web
// view does (observability/snapshot). Only a Rollout that cannot be read is
// an error; what else cannot be read is reported in the snapshot.
func (s *session) snapshot(ctx context.Context, name string) (view.Snapshot, error) {
	ro, err := s.rollout(ctx, name)
	if err != nil {
		return view.Snapshot{}, err
	}
	snap := s.reader().Read(ctx, ro, time.Now())
	events, err := snapshot.Events(ctx, s.c, ro)
	if err != nil {
		snap.Problems = append(snap.Problems, err.Error())
	}
	snap.Events = events
	return snap, nil
}

// reader reads snapshots through the session's client, and workloads the
// way sluice does, through the workload adapter of their kind.
func (s *session) reader() snapshot.Reader {
	return snapshot.Reader{Client: s.c, Workloads: kinds.New}
}

// workloadStatus reads ro's workload the way sluice does.
func workloadStatus(ctx context.Context, s *session, ro *rolloutsv1beta1.Rollout) (*workload.Status, error) {
	return s.reader().WorkloadStatus(ctx, ro)
}
