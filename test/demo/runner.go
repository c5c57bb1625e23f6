package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Timing of the demo's loops.
const (
	tick = 200 * time.Millisecond
	// waitTimeout bounds each wait of the basic release.
	waitTimeout = 2 * time.Minute
)

// runner is what both stories share: the screen, the pace and the clock,
// and the waits that give up when something the demo started has died.
type runner struct {
	screen *screen
	// pace is how long the demo shows what comes next before it acts.
	pace time.Duration
	// timeout bounds each wait.
	timeout time.Duration
	// failed reports a control-plane process that died.
	failed <-chan error
	// alive returns why a process the demo started (a Flux controller) is
	// gone, or nil; nil means there is none to check.
	alive func() error
	start time.Time
}

// until polls cond every tick for up to r.timeout.
func (r *runner) until(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(r.timeout)
	for {
		ok, err := cond(ctx)
		switch {
		case err != nil:
			return err
		case ok:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("gave up waiting for %s after %s", what, r.timeout)
		}
		if err := r.sleep(ctx, tick); err != nil {
			return err
		}
	}
}

// sleep waits for dur, the end of ctx or the failure of something the demo
// started.
func (r *runner) sleep(ctx context.Context, dur time.Duration) error {
	if r.alive != nil {
		if err := r.alive(); err != nil {
			return err
		}
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-r.failed:
		return errors.Join(errors.New("the local control plane failed"), err)
	case <-t.C:
		return nil
	}
}

// note writes a timestamped line that stays on screen.
func (r *runner) note(format string, args ...any) {
	r.screen.note(fmt.Sprintf("[%5.1fs] ", time.Since(r.start).Seconds()), fmt.Sprintf(format, args...))
}
