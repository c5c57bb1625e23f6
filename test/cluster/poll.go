package cluster

import (
	"context"
	"fmt"
	"time"
)

// pollInterval is how often start-up re-checks a condition.
const pollInterval = 100 * time.Millisecond

// condition reports whether what start-up waits for holds. An error means
// "not yet" and explains why; it is reported if the wait times out.
type condition func(ctx context.Context) (bool, error)

// waitFor polls cond until it holds. It fails when timeout passes, ctx ends,
// or one of procs exits (quoting that process's log tail), so a component
// that crashes fails start-up at once instead of at the deadline. The last
// of procs is the one whose work cond checks: a timeout quotes its log.
func waitFor(ctx context.Context, what string, timeout time.Duration, procs []*process, cond condition) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var last error
	for {
		for _, p := range procs {
			if p.exited() {
				return fmt.Errorf("waiting for %s: %w", what, p.exitError())
			}
		}
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return timeoutError(what, ctx.Err(), last, procs)
		case <-ticker.C:
		}
	}
}

// timeoutError explains a wait that ran out of time: the last failed check
// and the log tail of the process waited on.
func timeoutError(what string, err, last error, procs []*process) error {
	if last != nil {
		err = fmt.Errorf("%w (last check: %w)", err, last)
	}
	if len(procs) == 0 {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	p := procs[len(procs)-1]
	return fmt.Errorf("waiting for %s: %w\n%s log:\n%s", what, err, p.name, p.logTail())
}
