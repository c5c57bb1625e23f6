package gitops

import (
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/canary"
)

// The commit status says what the analysis of the step says, and which
// metric with which value aborted a release.
func TestDecide_analysisTexts(t *testing.T) {
	tests := []struct {
		name      string
		o         Observation
		wantState scm.CommitState
		want      string
	}{
		{name: "the step waits for its analysis", o: with(atStep(2), func(o *Observation) {
			o.Rollout.Analysis, o.Rollout.AnalysisRunning = "analysis 3/5 passed (error-rate 0.004)", true
		}), wantState: scm.StatePending, want: "step 2/3: analysis 3/5 passed (error-rate 0.004)"},
		{name: "passed, an approval wanted too", o: with(atStep(2), func(o *Observation) {
			o.Rollout.Analysis = "analysis 5/5 passed (error-rate 0.004)"
		}), wantState: scm.StatePending, want: "step 2/3: analysis 5/5 passed (error-rate 0.004); add label sluice/approve to continue"},
		{name: "aborted by the analysis", o: with(abortedAt(), func(o *Observation) {
			o.Rollout.Aborted.By, o.Rollout.Aborted.Via = "MetricGate errors", canary.ViaAnalysis
			o.Rollout.Aborted.Reason = "error-rate 0.12: result < 0.05 is false"
			o.Labels, o.Applied = nil, nil
		}), wantState: scm.StateFailure, want: "aborted at step 2: error-rate 0.12: result < 0.05 is false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			if len(d.Posts) == 0 {
				t.Fatalf("no post; message %q", d.Message)
			}
			if st := d.Posts[0].Status; st.State != tt.wantState || st.Description != tt.want {
				t.Fatalf("status %s %q, want %s %q", st.State, st.Description, tt.wantState, tt.want)
			}
		})
	}
}
