package series

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	av1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestOf_andSparkline(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ms := func(i int32, v string, o av1.Outcome) av1.Measurement {
		return av1.Measurement{Index: i, Time: metav1.NewMicroTime(at.Add(time.Duration(i) * time.Second)), Value: v, Outcome: o, Message: "m"}
	}
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}},
		Status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus: rolloutsv1beta1.CommonStatus{PodTemplateHash: "v2", ObservedRolloutID: "id", CurrentStepIndex: 1}}},
	}
	g := av1.MetricGate{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "errors"},
		Spec: av1.MetricGateSpec{RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: av1.MetricGateStatus{Rollouts: []av1.RolloutAnalysis{{Name: "web", Revision: "v2", RolloutID: "id", Runs: []av1.AnalysisRun{
			{Step: 1, Metrics: []av1.MetricRun{{Name: "error-rate", Verdict: av1.VerdictFailed, Measured: 4, Successful: 2, Failed: 1,
				Measurements: []av1.Measurement{ms(1, "0.01", av1.OutcomeSuccessful), ms(2, "0.02", av1.OutcomeSuccessful),
					ms(3, "", av1.OutcomeError), ms(4, "0.3", av1.OutcomeFailed)}}}},
		}}}},
	}
	other := g.DeepCopy()
	other.Name, other.Status.Rollouts[0].Revision = "stale", "v1"
	got := Of([]av1.MetricGate{*other, g}, ro)
	if len(got) != 1 || got[0].Gate != "errors" || got[0].Metric != "error-rate" || len(got[0].Points) != 4 || got[0].Failed != 1 {
		t.Fatalf("Of() = %+v, want the one series of this release", got)
	}
	if p := got[0].Points; !p[0].Numeric || p[0].Number != 0.01 || p[0].Message != "" || p[2].Numeric || p[3].Message != "m" {
		t.Fatalf("points %+v", p)
	}
	if s := Sparkline(got[0].Points); s != "▁▁×█" {
		t.Fatalf("Sparkline = %q, want ▁▁×█", s)
	}
	if lo, hi, ok := Range([]Point{{Number: 0.5, Numeric: true}}); !ok || lo != 0 || hi != 0.5 {
		t.Fatalf("Range of one value = %v %v %v, want 0..0.5", lo, hi, ok)
	}
}
