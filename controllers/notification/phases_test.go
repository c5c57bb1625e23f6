package notification

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func releasing() *rolloutsv1beta1.Rollout {
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout", Labels: map[string]string{"app": "checkout"}},
		Status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus:   rolloutsv1beta1.CommonStatus{PodTemplateHash: "hash2", ObservedRolloutID: "id2"},
			CanaryRevision: "rev2",
		}},
	}
}

func selector(app string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func TestCommitOf(t *testing.T) {
	gate := func(app, canary, commit string) gitopsv1alpha1.GitGate {
		return gitopsv1alpha1.GitGate{Spec: gitopsv1alpha1.GitGateSpec{RolloutSelector: selector(app)},
			Status: gitopsv1alpha1.GitGateStatus{Rollouts: []gitopsv1alpha1.BoundRollout{{Name: "checkout", CanaryRevision: canary, Revision: commit}}}}
	}
	tests := []struct {
		name  string
		gates []gitopsv1alpha1.GitGate
		want  string
	}{
		{name: "no gate"},
		{name: "the gate of the release", gates: []gitopsv1alpha1.GitGate{gate("checkout", "rev2", "abc")}, want: "abc"},
		{name: "a gate still on the last release", gates: []gitopsv1alpha1.GitGate{gate("checkout", "rev1", "old")}},
		{name: "a gate of other Rollouts", gates: []gitopsv1alpha1.GitGate{gate("cart", "rev2", "abc")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commitOf(tt.gates, releasing()); got != tt.want {
				t.Fatalf("commitOf() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFailuresOf(t *testing.T) {
	gate := func(revision string, v analysisv1alpha1.Verdict) analysisv1alpha1.MetricGate {
		return analysisv1alpha1.MetricGate{ObjectMeta: metav1.ObjectMeta{Name: "errors"},
			Spec: analysisv1alpha1.MetricGateSpec{RolloutSelector: selector("checkout"), OnFailure: analysisv1alpha1.FailureReport},
			Status: analysisv1alpha1.MetricGateStatus{Rollouts: []analysisv1alpha1.RolloutAnalysis{{Name: "checkout", Revision: revision, RolloutID: "id2",
				Runs: []analysisv1alpha1.AnalysisRun{{Step: 1, Verdict: v, Message: "error-rate 0.2"}}}}}}
	}
	got := failuresOf([]analysisv1alpha1.MetricGate{gate("hash2", analysisv1alpha1.VerdictFailed)}, releasing())
	if len(got) != 1 || got[0].Gate != "errors" || got[0].Step != 1 || got[0].Message != "error-rate 0.2" || got[0].Aborts {
		t.Fatalf("failures %+v", got)
	}
	if got := failuresOf([]analysisv1alpha1.MetricGate{gate("hash1", analysisv1alpha1.VerdictFailed)}, releasing()); len(got) != 0 {
		t.Fatalf("a failure of the last release reported: %+v", got)
	}
	if got := failuresOf([]analysisv1alpha1.MetricGate{gate("hash2", analysisv1alpha1.VerdictPassed)}, releasing()); len(got) != 0 {
		t.Fatalf("a passed run reported: %+v", got)
	}
}
