package gitops

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/argocdsim"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// argoManifest is the Deployment of the Argo CD stories at image tag: the
// world's Deployment with an annotation Git sets, which a person can edit
// (drift) and Argo CD's self-heal puts back.
func argoManifest(tag string) string {
	return strings.Replace(gitopsworld.DeploymentYAML(tag), "  name: checkout\n", "  name: checkout\n  annotations: {shop.example/owner: checkout-team}\n", 1)
}

// argoService is the app's Service, committed beside the Deployment.
const argoService = `apiVersion: v1
kind: Service
metadata:
  name: checkout
spec:
  selector: {app: checkout}
  ports:
  - {name: http, port: 80, targetPort: 8080}
`

// Story 3 against Argo CD (simulated, self-heal on): sluice/rollback at
// step 2 aborts the release, every pod back on the stable revision and
// the Service selecting only them, the template left as Git has it. Argo
// CD's self-heal re-applies the same commit twice (a person edited the
// Deployment; argocd-controller puts Git's manifest back): nothing is
// released again, and an approval for that revision is refused saying what
// to do. The revert merged and synced completes the rollback and hands the
// workload back; the statuses say failure on the merge, success on the
// revert.
func TestGitGate_argoCDSelfHeal_rollbackLabelHoldsUntilTheRevert(t *testing.T) {
	w, sim := newArgoWorld(t)
	w.gh.SetRole(ghRepo, "lead", githubfake.RoleMaintain)
	w.gh.SetRole(ghRepo, "ops", githubfake.RoleWrite)

	// Given v2 merged, synced by Argo CD, approved at step 1 and paused at
	// step 2 with 2 pods of v2.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: argoManifest("v2")})
	w.argoSynced(sim, merge)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "lead")
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")

	// When ops adds sluice/rollback to the pull request.
	w.gh.AddLabel(ghRepo, pr, "sluice/rollback", "ops")

	// Then the release is aborted at step 2 by ops: every pod back on v1
	// (the stable revision's pod-template-hash), the Service selecting
	// them as Git says, the template still v2, failure on the merge.
	w.waitAborted()
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	w.assertStableEverywhere(stable)
	ab := w.rollout().Status.Aborted
	if ab.Step != 2 || ab.By != "ops" || ab.Via != "github-label" {
		t.Fatalf("aborted = %+v, want at step 2 by ops via github-label", ab)
	}
	w.waitStatus(merge, "failure", "aborted at step 2/3 by ops")
	w.waitEvent("Rollout", "checkout", "RolledBack", "by ops via github-label")

	// When a person edits the Deployment, twice, and each time Argo CD's
	// self-heal applies the same commit over it with its field manager.
	heals := sim.Heals()
	for i := range 2 {
		w.driftDeployment(fmt.Sprintf("someone-else-%d", i))
		w.eventually(fmt.Sprintf("self-heal %d of %s", i+1, merge[:12]), func() (bool, string) {
			return sim.Heals() > heals && sim.Revision() == merge && w.deploymentAnnotation() == "checkout-team",
				fmt.Sprint(sim.Heals(), sim.Revision(), w.deploymentAnnotation(), sim.Err())
		})
		heals = sim.Heals()
		// Then nothing is released again.
		w.assertStaysAborted("v1", 4)
		w.assertStableEverywhere(stable)
		w.assertTemplate("v2")
		if m := w.deploymentManager(); m != "argocd-controller" {
			t.Fatalf("the Deployment's annotation is managed by %q, want argocd-controller (the self-heal's write)", m)
		}
	}
	// And an approval of that revision is refused saying what to do.
	w.afterSecond()
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "lead")
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "lead")
	w.waitEvent("Rollout", "checkout", "RolledBack", "rolled back; revert the commit in Git, or push a new one")
	w.assertStaysAborted("v1", 4)
	if n := w.statusCount(merge, "failure", "aborted at step 2/3 by ops"); n != 1 {
		t.Errorf("failure posted %d times, want once: %+v", n, w.gh.Statuses(ghRepo, merge))
	}

	// When the revert is merged and Argo CD syncs it.
	revert, err := w.repo.Revert("main", merge, gitserver.RevertOptions{Mainline: 1})
	if err != nil {
		t.Fatalf("reverting: %v", err)
	}
	w.mirror("main", revert)
	w.argoSynced(sim, revert)

	// Then the rollback completes and the workload is handed back: Healthy,
	// every pod and the template on v1, success on the revert, failure on
	// the merge.
	w.waitRollout("Healthy after the revert synced", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	w.waitDeployment("v1", 4)
	w.assertStableEverywhere(stable)
	w.waitStatus(revert, "success", "rolled back "+merge[:12]+": stable revision restored")
	w.waitStatus(merge, "failure", "rolled back by ops")
}

// newArgoWorld is newWorld with the simulated Argo CD instead of Flux: an
// Application (in the story's namespace, automated sync with self-heal)
// applying ./apps of the repository, which holds the Deployment, its
// Service and the Rollout.
func newArgoWorld(t *testing.T) (*world, *argocdsim.Sim) {
	t.Helper()
	ctx := ctxFor(t)
	w := newBareWorld(t, "gitops-argo-", "Deployment")
	first := w.commit("main", "Add checkout", map[string]string{manifest: argoManifest("v1"), "apps/service.yaml": argoService, rolloutManifest: w.rolloutYAML()})
	w.mirror("main", first)
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "github"}, StringData: map[string]string{"token": botToken}})
	sim, err := argocdsim.Start(ctx, argocdsim.Options{Client: suite.c, Name: "shop", Namespace: w.ns, RepoURL: w.repo.URL(), Path: "apps", Destination: w.ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Stop)
	w.argoSynced(sim, first)
	w.waitDeployment("v1", 4)
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.gate = &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:             gitopsv1alpha1.GitSource{URL: w.repo.URL(), Branch: "main"},
			GitHub:          &gitopsv1alpha1.GitHubRepository{Repository: ghRepo, APIURL: w.gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Interval:        metav1.Duration{Duration: time.Second},
		},
	}
	mustCreate(t, w.gate)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Argo CD simulation: revision %s, %d passes, %d heals, last error %v", sim.Revision(), sim.Passes(), sim.Heals(), sim.Err())
		}
	})
	t.Cleanup(w.explainFailure)
	w.waitGate("Ready", func(g *gitopsv1alpha1.GitGate) bool {
		return len(g.Status.Conditions) > 0 && g.Status.Conditions[0].Status == metav1.ConditionTrue && g.Status.BoundRollouts == 1
	})
	return w, sim
}

// argoSynced waits until the simulated Argo CD has synced commit sha.
func (w *world) argoSynced(sim *argocdsim.Sim, sha string) {
	w.t.Helper()
	w.eventually("Argo CD synced "+sha[:12], func() (bool, string) {
		return sim.Revision() == sha, fmt.Sprint(sim.Revision(), sim.Err())
	})
}

// driftDeployment changes the annotation Git sets on the Deployment, as a
// person with kubectl would: drift for Argo CD's self-heal to put back.
func (w *world) driftDeployment(owner string) {
	w.t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "checkout"}}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"shop.example/owner":%q}}}`, owner))
	if err := suite.c.Patch(ctxFor(w.t), d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-edit")); err != nil {
		w.t.Fatal(err)
	}
}

// deploymentAnnotation is the Deployment's shop.example/owner.
func (w *world) deploymentAnnotation() string {
	w.t.Helper()
	d := &appsv1.Deployment{}
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, d); err != nil {
		w.t.Fatal(err)
	}
	return d.Annotations["shop.example/owner"]
}

// deploymentManager is the field manager that last wrote the Deployment's
// shop.example/owner.
func (w *world) deploymentManager() string {
	w.t.Helper()
	d := &appsv1.Deployment{}
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, d); err != nil {
		w.t.Fatal(err)
	}
	for _, mf := range d.ManagedFields {
		if mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), `"f:shop.example/owner"`) {
			return mf.Manager
		}
	}
	return ""
}

// assertStableEverywhere checks that every live pod of checkout carries the
// stable revision's pod-template-hash and that the Service selects the
// app's pods as Git says (so it reaches only stable pods).
func (w *world) assertStableEverywhere(stable string) {
	w.t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(w.t), pods, client.InNamespace(w.ns), client.MatchingLabels{"app": "checkout"}); err != nil {
		w.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Labels["pod-template-hash"] != stable {
			w.t.Fatalf("pod %s has pod-template-hash %s, want the stable %s", p.Name, p.Labels["pod-template-hash"], stable)
		}
	}
	svc := &corev1.Service{}
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, svc); err != nil {
		w.t.Fatal(err)
	}
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector["app"] != "checkout" {
		w.t.Fatalf("Service selector %v, want Git's {app: checkout}", svc.Spec.Selector)
	}
}
