package gitops

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// Story: a GitGate whose branch cannot be read says so, and does not claim
// to have observed its spec: a platform team's health check (kstatus, Argo
// CD) sees "in progress, failing", not "done". Once the spec names a
// reachable repository, the gate is Ready and the new generation observed.
func TestGitGate_branchUnreachable_failsWithoutObservingTheGeneration(t *testing.T) {
	w := newBareWorld(t, "gitgate-status-", "Deployment")
	first := w.commit("main", "Add README", map[string]string{"README.md": "shop\n"})
	w.mirror("main", first)
	w.gate = &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			// Nothing listens on port 1.
			Git:             gitopsv1alpha1.GitSource{URL: "http://127.0.0.1:1/shop.git", Branch: "main"},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Interval:        metav1.Duration{Duration: time.Second},
		},
	}
	mustCreate(t, w.gate)

	failed := w.waitGate("failing to fetch", func(g *gitopsv1alpha1.GitGate) bool {
		c := apimeta.FindStatusCondition(g.Status.Conditions, meta.ReadyCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "GitFetchFailed"
	})
	if failed.Status.ObservedGeneration == failed.Generation {
		t.Fatalf("observedGeneration %d while the branch cannot be read, want it below generation %d", failed.Status.ObservedGeneration, failed.Generation)
	}
	if !apimeta.IsStatusConditionTrue(failed.Status.Conditions, meta.ReconcilingCondition) {
		t.Errorf("conditions %+v, want Reconciling=True (retrying)", failed.Status.Conditions)
	}

	base := failed.DeepCopy()
	failed.Spec.Git.URL = w.repo.URL()
	if err := suite.c.Patch(ctxFor(t), failed, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	w.waitGate("Ready on the reachable repository", func(g *gitopsv1alpha1.GitGate) bool {
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) &&
			g.Status.ObservedGeneration == g.Generation && g.Generation >= 2 && g.Status.Head == first
	})
}
