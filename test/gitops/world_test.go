package gitops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/meta"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The GitHub side of every story.
const (
	ghRepo   = "acme/shop"
	botToken = "sluice-bot-token"
	manifest = "apps/checkout.yaml"
	// rolloutManifest is where the Rollout lives in Git, beside the
	// workload, as in real life.
	rolloutManifest = "apps/rollout.yaml"
)

// The Flux objects of every story, in the story's namespace.
const (
	gitRepository = "shop"
	kustomization = "apps"
)

// world is one story's setting: a namespace with a Deployment (or another
// kind) "checkout" and its Rollout (steps 1 pod (pause), 2 pods (pause),
// all), both in a Git repository mirrored on the fake GitHub and applied by
// real Flux (a GitRepository and a Kustomization of ./apps in the
// namespace), and a GitGate binding the Rollout.
type world struct {
	t  *testing.T
	ns string
	// kind is the workload's kind: Deployment or StatefulSet.
	kind string
	repo *gitserver.Repo
	gh   *githubfake.Server
	gate *gitopsv1alpha1.GitGate
	// fluxNS and fluxName name the Kustomization that applies the app.
	fluxNS, fluxName string
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newWorld builds the setting around a Deployment and waits until the
// Rollout is Healthy on the first commit, image v1.
func newWorld(t *testing.T, mutate func(*gitopsv1alpha1.GitGate)) *world {
	t.Helper()
	return newWorldOf(t, "Deployment", mutate)
}

// newBareWorld is a story's namespace (deleted when the story passed), a
// fake GitHub holding ghRepo with the bot's token, and an empty Git
// repository named after the namespace (prefix and a random suffix).
func newBareWorld(t *testing.T, prefix, kind string) *world {
	t.Helper()
	ctx := ctxFor(t)
	w := &world{t: t, ns: prefix + rand.String(6), kind: kind}
	if err := suite.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = suite.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})
		}
	})
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatalf("starting the fake GitHub: %v", err)
	}
	t.Cleanup(gh.Close)
	w.gh = gh
	gh.CreateRepo(ghRepo, "main", map[string]string{"README.md": "shop\n"})
	gh.AddToken(botToken, "sluice-bot")
	gh.SetRole(ghRepo, "sluice-bot", githubfake.RoleWrite)
	if w.repo, err = suite.git.CreateRepo(w.ns+".git", "main"); err != nil {
		t.Fatalf("creating the repository: %v", err)
	}
	return w
}

// newWorldOf builds the setting around a workload of kind (Deployment or
// StatefulSet) and waits until the Rollout is Healthy on the first commit,
// image v1.
func newWorldOf(t *testing.T, kind string, mutate func(*gitopsv1alpha1.GitGate)) *world {
	t.Helper()
	w := newBareWorld(t, "gitops-", kind)
	first := w.commit("main", "Add checkout", map[string]string{manifest: w.manifestYAML("v1"), rolloutManifest: w.rolloutYAML()})
	w.mirror("main", first)

	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "github"}, StringData: map[string]string{"token": botToken}})
	w.startFlux(kustomization, w.ns, "./apps", w.ns)
	w.waitApplied(first)
	w.waitDeployment("v1", 4)
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.gate = &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:             gitopsv1alpha1.GitSource{URL: w.repo.URL(), Branch: "main"},
			GitHub:          &gitopsv1alpha1.GitHubRepository{Repository: ghRepo, APIURL: w.gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Status:          gitopsv1alpha1.StatusPolicy{TargetURL: "https://sluice.example/${namespace}/${rollout}?revision=${revision}"},
			Interval:        metav1.Duration{Duration: time.Second},
		},
	}
	if mutate != nil {
		mutate(w.gate)
	}
	mustCreate(t, w.gate)
	t.Cleanup(w.explainFailure)
	w.waitGate("Ready", func(g *gitopsv1alpha1.GitGate) bool {
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) && g.Status.BoundRollouts == 1
	})
	return w
}

// rolloutYAML is the manifest of the Rollout of the world's workload.
func (w *world) rolloutYAML() string { return gitopsworld.RolloutYAML(w.kind) }

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// deploymentYAML is the manifest of the Deployment at image tag.
func deploymentYAML(tag string) string { return gitopsworld.DeploymentYAML(tag) }

// manifestYAML is the manifest of the world's workload at image tag.
func (w *world) manifestYAML(tag string) string {
	if w.kind == "StatefulSet" {
		return gitopsworld.StatefulSetYAML(tag)
	}
	return deploymentYAML(tag)
}

// commit writes files on branch of the Git repository.
func (w *world) commit(branch, message string, files map[string]string) string {
	w.t.Helper()
	sha, err := w.repo.Commit(branch, gitserver.Change{Message: message, Files: files})
	if err != nil {
		w.t.Fatalf("committing: %v", err)
	}
	return sha
}

// mirror records the commit sha of the Git repository on the fake GitHub.
func (w *world) mirror(branch, sha string) {
	w.t.Helper()
	if err := w.shared().Mirror(branch, sha); err != nil {
		w.t.Fatal(err)
	}
}

// mergePullRequest opens a pull request by author that changes files, and
// merges it as merger: a merge commit on main in Git, mirrored on GitHub.
// It returns the pull request's number and the merge commit.
func (w *world) mergePullRequest(title, author, merger string, files map[string]string) (int, string) {
	w.t.Helper()
	number, merge, err := w.shared().MergePullRequest(title, author, merger, files)
	if err != nil {
		w.t.Fatal(err)
	}
	return number, merge
}

// shared is the world's repository as test/gitopsworld drives it.
func (w *world) shared() gitopsworld.Repo {
	return gitopsworld.Repo{Git: w.repo, GitHub: w.gh, Name: ghRepo}
}

// explainFailure logs, when the story failed, what the GitGate, the Rollout
// and Flux last said.
func (w *world) explainFailure() {
	if !w.t.Failed() {
		return
	}
	ctx := context.Background()
	g := &gitopsv1alpha1.GitGate{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: "shop"}, g); err == nil {
		b, _ := json.Marshal(g.Status)
		w.t.Logf("GitGate status: %s", b)
	}
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: "checkout"}, ro); err == nil {
		b, _ := json.Marshal(ro.Status)
		w.t.Logf("Rollout status: %s", b)
	}
	if sha, err := suite.flux.AppliedRevision(ctx, w.fluxNS, w.fluxName); err == nil {
		w.t.Logf("Flux applied %s; its logs: %s", sha, suite.flux.LogFile("kustomize-controller"))
	}
}

// startFlux has Flux apply path of the world's repository: a GitRepository
// "shop" and a Kustomization name, both in namespace ns, applying into
// target (empty: the manifests name their namespace). Both use Flux's
// default short test interval, so that every few seconds Flux applies the
// branch head again and puts back whatever drifted from Git.
func (w *world) startFlux(name, ns, path, target string) {
	w.t.Helper()
	ctx := ctxFor(w.t)
	if err := suite.flux.CreateGitRepository(ctx, flux.GitRepository{Namespace: ns, Name: gitRepository, URL: w.repo.URL()}); err != nil {
		w.t.Fatal(err)
	}
	if err := suite.flux.CreateKustomization(ctx, flux.Kustomization{Namespace: ns, Name: name, Source: gitRepository, Path: path, TargetNamespace: target}); err != nil {
		w.t.Fatal(err)
	}
	w.fluxNS, w.fluxName = ns, name
	if ns != w.ns { // the namespace's deletion does not take them
		w.t.Cleanup(func() {
			if w.t.Failed() {
				return
			}
			for _, o := range []*unstructured.Unstructured{fluxObject(flux.KustomizationGVK, ns, name), fluxObject(flux.GitRepositoryGVK, ns, gitRepository)} {
				_ = suite.c.Delete(context.Background(), o)
			}
		})
	}
}

func fluxObject(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// waitApplied waits until Flux has applied commit sha: the release of a
// commit starts when Flux applies it.
func (w *world) waitApplied(sha string) {
	w.t.Helper()
	if err := suite.flux.WaitApplied(ctxFor(w.t), w.fluxNS, w.fluxName, sha); err != nil {
		w.t.Fatal(err)
	}
}

// reapplied has Flux apply the world's Kustomization once more, as its
// drift correction does at every interval, and checks that it applied sha
// again: the same commit, re-applied over whatever sluice did meanwhile.
func (w *world) reapplied(sha string) {
	w.t.Helper()
	if err := suite.flux.Reapply(ctxFor(w.t), w.fluxNS, w.fluxName); err != nil {
		w.t.Fatal(err)
	}
	w.waitApplied(sha)
}

// suspendFlux suspends the world's Kustomization: what is pushed next is
// not applied until resumeFlux.
func (w *world) suspendFlux() {
	w.t.Helper()
	if err := suite.flux.Suspend(ctxFor(w.t), w.fluxNS, w.fluxName); err != nil {
		w.t.Fatal(err)
	}
}

// resumeFlux resumes the world's Kustomization, which applies the branch
// head at once.
func (w *world) resumeFlux() {
	w.t.Helper()
	if err := suite.flux.Resume(ctxFor(w.t), w.fluxNS, w.fluxName); err != nil {
		w.t.Fatal(err)
	}
}

// eventually polls cond every 100ms until it holds, failing after two
// minutes with cond's last description of what it saw.
func (w *world) eventually(what string, cond func() (bool, string)) {
	w.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		w.t.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}

func (w *world) rollout() *rolloutsv1beta1.Rollout {
	w.t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, ro); err != nil {
		w.t.Fatal(err)
	}
	return ro
}

func (w *world) waitRollout(what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	w.t.Helper()
	var ro *rolloutsv1beta1.Rollout
	w.eventually("rollout "+what, func() (bool, string) {
		ro = w.rollout()
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

func (w *world) waitStep(index int32, state rolloutsv1beta1.CanaryStepState) *rolloutsv1beta1.Rollout {
	w.t.Helper()
	return w.waitRollout(fmt.Sprintf("step %d %s", index, state), func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == index && ro.Status.CurrentStepState == state
	})
}

func (w *world) getGate() *gitopsv1alpha1.GitGate {
	w.t.Helper()
	g := &gitopsv1alpha1.GitGate{}
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "shop"}, g); err != nil {
		w.t.Fatal(err)
	}
	return g
}

func (w *world) waitGate(what string, cond func(*gitopsv1alpha1.GitGate) bool) *gitopsv1alpha1.GitGate {
	w.t.Helper()
	var g *gitopsv1alpha1.GitGate
	w.eventually("gitgate "+what, func() (bool, string) {
		g = w.getGate()
		b, _ := json.Marshal(g.Status)
		return cond(g), string(b)
	})
	return g
}

// podsByImage counts the live pods of checkout by image tag (what follows
// the image's last colon).
func (w *world) podsByImage() map[string]int {
	w.t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(w.t), pods, client.InNamespace(w.ns), client.MatchingLabels{"app": "checkout"}); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			img := p.Spec.Containers[0].Image
			out[img[strings.LastIndex(img, ":")+1:]]++
		}
	}
	return out
}

// waitDeployment waits until the workload runs n pods of tag, all ready.
func (w *world) waitDeployment(tag string, n int) {
	w.t.Helper()
	if w.kind == "StatefulSet" {
		w.waitStatefulSet(tag, n)
		return
	}
	w.eventually(fmt.Sprintf("%d pods of %s", n, tag), func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, d); err != nil {
			return false, err.Error()
		}
		pods := w.podsByImage()
		return pods[tag] == n && len(pods) == 1 && d.Status.AvailableReplicas == int32(n), fmt.Sprint(pods, d.Status) //nolint:gosec // small
	})
}

// waitStatefulSet waits until the StatefulSet runs n pods of tag, all
// ready, and its template is at tag.
func (w *world) waitStatefulSet(tag string, n int) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("%d pods of %s", n, tag), func() (bool, string) {
		s := &appsv1.StatefulSet{}
		if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, s); err != nil {
			return false, err.Error()
		}
		pods := w.podsByImage()
		image := s.Spec.Template.Spec.Containers[0].Image
		return pods[tag] == n && len(pods) == 1 && s.Status.ReadyReplicas == int32(n) && image == "shop/checkout:"+tag, //nolint:gosec // small
			fmt.Sprint(pods, image, s.Status)
	})
}

// status returns the newest status of the checkout context on sha ("" state
// when there is none).
func (w *world) status(sha string) githubfake.Status {
	for _, s := range w.gh.Statuses(ghRepo, sha) {
		if s.Context == "sluice/"+w.ns+"/checkout" {
			return s
		}
	}
	return githubfake.Status{}
}

// waitStatus waits until sha's newest status has state and description.
func (w *world) waitStatus(sha, state, description string) githubfake.Status {
	w.t.Helper()
	var s githubfake.Status
	w.eventually(fmt.Sprintf("status %s %q on %s", state, description, sha[:12]), func() (bool, string) {
		s = w.status(sha)
		return s.State == state && s.Description == description, fmt.Sprintf("%+v", w.gh.Statuses(ghRepo, sha))
	})
	return s
}

// approvals returns the Rollout's record of applied approvals.
func (w *world) approvals() []approval.Approval {
	w.t.Helper()
	records, err := approval.Records(w.rollout().Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		w.t.Fatal(err)
	}
	return records
}

// waitEvent waits for an event with reason about the object of kind name
// whose note contains text.
func (w *world) waitEvent(kind, name, reason, text string) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("event %s on %s %s containing %q", reason, kind, name, text), func() (bool, string) {
		list := &eventsv1.EventList{}
		if err := suite.c.List(ctxFor(w.t), list, client.InNamespace(w.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason && strings.Contains(e.Note, text) {
				return true, ""
			}
			seen = append(seen, e.Regarding.Kind+"/"+e.Reason+": "+e.Note)
		}
		return false, strings.Join(seen, "\n")
	})
}

// statusCount counts the statuses with state and description on sha.
func (w *world) statusCount(sha, state, description string) int {
	n := 0
	for _, s := range w.gh.Statuses(ghRepo, sha) {
		if s.Context == "sluice/"+w.ns+"/checkout" && s.State == state && s.Description == description {
			n++
		}
	}
	return n
}
