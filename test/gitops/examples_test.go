package gitops

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/test/argocdsim"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// examplesRoot is the examples folder, relative to this package.
const examplesRoot = "../../examples"

// The test stands in for GitHub and the GitOps tool: the example's
// placeholders are replaced by these.
const (
	exampleWebhookSecret = "example-webhook-secret"
	// argoApp is the Argo CD Application the Argo CD example's README
	// creates, in Argo CD's namespace.
	argoApp = "shop-checkout"
)

// exampleFiles decodes every manifest of the example folder dir.
func exampleFiles(t *testing.T, dir string) map[string][]client.Object {
	t.Helper()
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]client.Object{}
	for _, name := range []string{"namespace.yaml", "secrets.yaml", "gitgate.yaml", "deployment.yaml", "service.yaml", "rollout.yaml"} {
		data, err := os.ReadFile(filepath.Join(examplesRoot, dir, name))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := examples.Decode(data, scheme)
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, name, err)
		}
		out[name] = objs
	}
	return out
}

// exampleManifest is the example's deployment.yaml as committed to Git, at
// image tag.
func exampleManifest(t *testing.T, dir, tag string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesRoot, dir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.Contains(s, "checkout:v1") {
		t.Fatalf("%s/deployment.yaml does not run image tag v1", dir)
	}
	return strings.ReplaceAll(s, "checkout:v1", "checkout:"+tag)
}

// Given the Flux example applied as its README says (Secrets, GitGate, the
// app applied by Flux from Git), with the URLs pointed at the test's Git
// server and GitHub
// When a pull request bumping the image to v2 is merged and Flux applies it
// Then the merge commit's status says step 1/3 paused; the label
// sluice/approve moves the release to step 2, sluice/promote-full finishes
// it, and the status turns success, as the README documents.
func TestExample_gitopsFlux_releasesWithLabels(t *testing.T) {
	runGitOpsExample(t, "gitops-flux", exampleTool{
		// The README's GitRepository and Kustomization (with the test's
		// short intervals) in flux-system.
		start: func(w *world) {
			w.t.Helper()
			if err := suite.c.Create(ctxFor(w.t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
				w.t.Fatal(err)
			}
			w.startFlux("shop-checkout", "flux-system", "./apps/checkout", "")
		},
		applied: func(w *world, sha string) { w.waitApplied(sha) },
	})
}

// The same as TestExample_gitopsFlux_releasesWithLabels, with the Argo CD
// example: Argo CD's tracking annotation on the Deployment names the
// Application whose synced revision is the commit being released.
func TestExample_gitopsArgoCD_releasesWithLabels(t *testing.T) {
	var sim *argocdsim.Sim
	runGitOpsExample(t, "gitops-argocd", exampleTool{
		// The README's Application, in Argo CD's namespace, synced and
		// self-healed by the simulation.
		start: func(w *world) {
			w.t.Helper()
			var err error
			sim, err = argocdsim.Start(ctxFor(w.t), argocdsim.Options{Client: suite.c, Name: argoApp, RepoURL: w.repo.URL(), Path: "apps/checkout", Destination: w.ns})
			if err != nil {
				w.t.Fatal(err)
			}
			w.t.Cleanup(sim.Stop)
		},
		applied: func(w *world, sha string) {
			w.t.Helper()
			w.eventually("Argo CD synced "+sha[:12], func() (bool, string) {
				return sim.Revision() == sha, fmt.Sprint(sim.Revision(), sim.Err())
			})
		},
	})
}

// exampleTool is the GitOps tool of an example.
type exampleTool struct {
	// start has the tool apply the example's folder of the repository.
	start func(*world)
	// applied waits until the tool has applied commit sha.
	applied func(w *world, sha string)
}

// exampleApp is the example's app as committed to Git at apps/checkout/,
// with the Deployment at image tag.
func exampleApp(t *testing.T, dir, tag string) map[string]string {
	t.Helper()
	files := map[string]string{"apps/checkout/deployment.yaml": exampleManifest(t, dir, tag)}
	for _, name := range []string{"service.yaml", "rollout.yaml"} {
		data, err := os.ReadFile(filepath.Join(examplesRoot, dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files["apps/checkout/"+name] = string(data)
	}
	return files
}

// runGitOpsExample applies the example in dir, with tool as the GitOps
// tool, and releases v2 with labels.
func runGitOpsExample(t *testing.T, dir string, tool exampleTool) {
	objs := exampleFiles(t, dir)
	ns := objs["namespace.yaml"][0].GetName()
	w := &world{t: t, ns: ns, kind: "Deployment"}
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatalf("starting the fake GitHub: %v", err)
	}
	t.Cleanup(gh.Close)
	w.gh = gh
	gh.CreateRepo(ghRepo, "main", map[string]string{"README.md": "shop\n"})
	gh.AddToken(botToken, "sluice-bot")
	gh.SetRole(ghRepo, "sluice-bot", githubfake.RoleWrite)
	gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	if w.repo, err = suite.git.CreateRepo(ns+".git", "main"); err != nil {
		t.Fatalf("creating the repository: %v", err)
	}

	// Given the example's namespace and Secrets, with the placeholders
	// filled in.
	mustCreate(t, objs["namespace.yaml"][0])
	t.Cleanup(func() {
		if !t.Failed() {
			_ = suite.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	})
	fill := map[string]map[string]string{
		"github":         {"token": botToken},
		"github-webhook": {"token": exampleWebhookSecret},
		"git":            {"password": "unused-by-the-test-server"},
	}
	for _, o := range objs["secrets.yaml"] {
		s := o.(*corev1.Secret)
		for k, v := range s.StringData {
			if !strings.HasPrefix(v, "REPLACE_WITH_") && k != "username" {
				t.Errorf("%s/secrets.yaml: Secret %s key %s is %q, want a REPLACE_WITH_ placeholder", dir, s.Name, k, v)
			}
		}
		for k, v := range fill[s.Name] {
			s.StringData[k] = v
		}
		mustCreate(t, s)
	}
	// And the app (Deployment, Service, Rollout) in Git, applied by the
	// GitOps tool.
	first := w.commit("main", "Add checkout", exampleApp(t, dir, "v1"))
	w.mirror("main", first)
	tool.start(w)
	tool.applied(w, first)
	w.waitDeployment("v1", 4)
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	// And the GitGate, pointed at the test's Git server and GitHub.
	gate := objs["gitgate.yaml"][0].(*gitopsv1alpha1.GitGate)
	gate.Spec.Git.URL = w.repo.URL()
	gate.Spec.GitHub.APIURL = gh.URL
	w.gate = gate
	mustCreate(t, gate)
	w.waitGate("Ready", func(g *gitopsv1alpha1.GitGate) bool {
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) && g.Status.BoundRollouts == 1
	})

	// When a pull request bumping checkout to v2 is merged and synced.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{"apps/checkout/deployment.yaml": exampleManifest(t, dir, "v2")})
	tool.applied(w, merge)

	// Then step 1 pauses with 1 pod of v2, and the merge commit says so.
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	s := w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	if s.Context != "sluice/"+ns+"/checkout" {
		t.Errorf("status context %q, want sluice/%s/checkout", s.Context, ns)
	}
	if g := w.getGate(); len(g.Status.Rollouts) != 1 || g.Status.Rollouts[0].Revision != merge || g.Status.Rollouts[0].PullRequest != pr {
		t.Errorf("gate status %+v, want checkout releasing %s of pull request #%d", g.Status.Rollouts, merge[:12], pr)
	}

	// When the reviewer adds sluice/approve, and GitHub's webhook says so.
	w.afterPause()
	w.labelAndDeliver(pr, "sluice/approve", "reviewer")
	// Then step 2 pauses with 2 pods of v2, approved by the reviewer.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")
	if got := w.approvals(); len(got) != 1 || got[0].Step != 1 || got[0].By != "reviewer" || got[0].Via != "github-label" {
		t.Fatalf("approvals = %+v, want step 1 by reviewer via github-label", got)
	}

	// When the reviewer adds sluice/promote-full (after step 2 paused: a
	// label of the pause's own second counts as older).
	w.afterPause()
	w.labelAndDeliver(pr, "sluice/promote-full", "reviewer")
	// Then every pod runs v2 and the merge commit's status is success.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
}

// labelAndDeliver adds label to the pull request as user and delivers the
// webhook GitHub sends for it, signed with the example's webhook secret.
func (w *world) labelAndDeliver(pr int, label, user string) {
	w.t.Helper()
	w.gh.AddLabel(ghRepo, pr, label, user)
	d, err := w.gh.DeliverLabel(context.Background(), suite.hookURL, []byte(exampleWebhookSecret), ghRepo, pr, label, user, true)
	if err != nil || d.Status != http.StatusOK {
		w.t.Fatalf("delivering label %s: %d, %v; want 200", label, d.Status, err)
	}
}
