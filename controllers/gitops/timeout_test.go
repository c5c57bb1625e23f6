package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestDecide_stepTimeout(t *testing.T) {
	key := "timeout:1@" + paused.Format(time.RFC3339)
	timed := func(now time.Time, f func(*Observation)) Observation {
		return with(atStep(1), func(o *Observation) {
			o.Policy.StepTimeout = 10 * time.Minute
			o.Now = now
			if f != nil {
				f(o)
			}
		})
	}
	for _, tt := range []struct {
		name      string
		o         Observation
		wantApply *Intent
		wantWake  time.Time
		wantMsg   string
	}{
		{name: "no timeout: waits for ever", o: with(atStep(1), func(o *Observation) { o.Now = paused.Add(24 * time.Hour) })},
		{name: "before the timeout: looks again at it", o: timed(paused.Add(5*time.Minute), nil), wantWake: paused.Add(10 * time.Minute)},
		{
			name:      "past the timeout: aborts, once, as sluice",
			o:         timed(paused.Add(11*time.Minute), nil),
			wantApply: &Intent{Action: ActionRollback, By: "sluice", Via: ViaStepTimeout, At: paused.Add(10 * time.Minute), Key: key},
		},
		{
			name: "an approval in time wins",
			o: timed(paused.Add(11*time.Minute), func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after, Key: stepKey(1)},
		},
		{
			name: "the abort applied: nothing more",
			o: timed(paused.Add(11*time.Minute), func(o *Observation) {
				o.Applied = []Applied{{Action: ActionRollback, By: "sluice", Via: ViaStepTimeout, Key: key}}
			}),
			wantMsg: "",
		},
		{
			name:    "Wait: says the step is overdue",
			o:       timed(paused.Add(11*time.Minute), func(o *Observation) { o.Policy.WaitPastTimeout = true }),
			wantMsg: "overdue: waiting longer than 10m0s for an approval",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			if !sameIntent(d.Apply, tt.wantApply) {
				t.Errorf("Apply = %+v, want %+v", d.Apply, tt.wantApply)
			}
			if !d.WakeAt.Equal(tt.wantWake) {
				t.Errorf("WakeAt = %v, want %v", d.WakeAt, tt.wantWake)
			}
			if !strings.Contains(d.Message, tt.wantMsg) {
				t.Errorf("Message = %q, want it to contain %q", d.Message, tt.wantMsg)
			}
			if tt.wantMsg != "" {
				for _, p := range d.Posts {
					if !strings.Contains(p.Status.Description, tt.wantMsg) {
						t.Errorf("status %q does not say %q", p.Status.Description, tt.wantMsg)
					}
				}
			}
		})
	}
}
