package gitops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fluxcd/pkg/apis/meta"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/revision"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The GitHub side of every story.
const (
	ghRepo   = "acme/shop"
	botToken = "sluice-bot-token"
	manifest = "apps/checkout.yaml"
)

// world is one story's setting: a namespace with a Deployment (or another
// kind) "checkout" applied by the simulated Flux from a Git repository
// mirrored on the fake GitHub, a Rollout of it with steps 1 pod (pause), 2
// pods (pause), all, and a GitGate binding it.
type world struct {
	t  *testing.T
	ns string
	// kind is the workload's kind: Deployment or StatefulSet.
	kind string
	repo *gitserver.Repo
	gh   *githubfake.Server
	gate *gitopsv1alpha1.GitGate
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

// newWorldOf builds the setting around a workload of kind (Deployment or
// StatefulSet) and waits until the Rollout is Healthy on the first commit,
// image v1.
func newWorldOf(t *testing.T, kind string, mutate func(*gitopsv1alpha1.GitGate)) *world {
	t.Helper()
	ctx := ctxFor(t)
	w := &world{t: t, ns: "gitops-" + rand.String(6), kind: kind}
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
	first := w.commit("main", "Add checkout", map[string]string{manifest: w.manifestYAML("v1")})
	w.mirror("main", first)

	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "github"}, StringData: map[string]string{"token": botToken}})
	w.kustomization()
	w.fluxSync(first)
	w.waitDeployment("v1", 4)
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "checkout", Labels: map[string]string{"app": "checkout"}},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: w.kind, Name: "checkout"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				step("1"), step("2"), {Replicas: ptr(intstr.FromString("100%"))},
			}}},
		},
	}
	mustCreate(t, ro)
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.gate = &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "shop"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:             gitopsv1alpha1.GitSource{URL: w.repo.URL(), Branch: "main"},
			GitHub:          gitopsv1alpha1.GitHubRepository{Repository: ghRepo, APIURL: gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Status:          gitopsv1alpha1.StatusPolicy{TargetURL: "https://sluice.example/${namespace}/${rollout}?revision=${revision}"},
			Interval:        metav1.Duration{Duration: time.Second},
		},
	}
	if mutate != nil {
		mutate(w.gate)
	}
	mustCreate(t, w.gate)
	w.waitGate("Ready", func(g *gitopsv1alpha1.GitGate) bool {
		return len(g.Status.Conditions) > 0 && g.Status.Conditions[0].Status == metav1.ConditionTrue && g.Status.BoundRollouts == 1
	})
	return w
}

func step(replicas string) rolloutsv1beta1.CanaryStep {
	return rolloutsv1beta1.CanaryStep{Replicas: ptr(intstr.Parse(replicas))}
}

func ptr[T any](v T) *T { return &v }

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.c.Create(ctxFor(t), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// deploymentYAML is the manifest of the Deployment at image tag.
func deploymentYAML(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  replicas: 4
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:%s
`, tag)
}

// manifestYAML is the manifest of the world's workload at image tag.
func (w *world) manifestYAML(tag string) string {
	if w.kind == "StatefulSet" {
		return statefulSetYAML(tag)
	}
	return deploymentYAML(tag)
}

// statefulSetYAML is the manifest of a StatefulSet at image tag. It sets no
// partition: sluice owns that field during a release.
func statefulSetYAML(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: checkout
spec:
  replicas: 4
  serviceName: checkout
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:%s
`, tag)
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
	c, err := w.repo.CommitObject(sha)
	if err != nil {
		w.t.Fatalf("reading commit %s: %v", sha, err)
	}
	parents := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = p.String()
	}
	w.gh.MirrorCommit(ghRepo, branch, sha, parents, c.Message, githubfake.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When})
}

// mergePullRequest opens a pull request by author that changes files, and
// merges it as reviewer: a merge commit on main in Git, mirrored on GitHub.
// It returns the pull request's number and the merge commit.
func (w *world) mergePullRequest(title, author, merger string, files map[string]string) (int, string) {
	w.t.Helper()
	branch := "pr-" + rand.String(4)
	head, err := w.repo.Head("main")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.repo.Branch(branch, head); err != nil {
		w.t.Fatal(err)
	}
	w.commit(branch, title, files)
	w.gh.Commit(ghRepo, branch, "main", title, map[string]string{"pr/" + branch: title}, githubfake.Signature{Name: author, Email: author + "@example.com"})
	number := w.gh.OpenPullRequest(ghRepo, branch, "main", title, author)
	merge, err := w.repo.Merge("main", branch, gitserver.MergeOptions{Message: fmt.Sprintf("Merge pull request #%d from acme/%s\n\n%s", number, branch, title)})
	if err != nil {
		w.t.Fatalf("merging: %v", err)
	}
	w.mirror("main", merge)
	w.gh.MirrorMerge(ghRepo, number, merge, merger)
	return number, merge
}

// kustomization creates the Flux Kustomization "apps" of the namespace.
func (w *world) kustomization() {
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(revision.KustomizationGVK)
	k.SetNamespace(w.ns)
	k.SetName("apps")
	k.Object["spec"] = map[string]any{
		"interval": "1m", "path": "./apps", "prune": true,
		"sourceRef": map[string]any{"kind": "GitRepository", "name": "shop"},
	}
	mustCreate(w.t, k)
}

// fluxSync does what kustomize-controller does for a new revision: apply the
// commit's manifests with server-side apply, labelled with the
// Kustomization, then record the revision in its status.
func (w *world) fluxSync(sha string) {
	w.t.Helper()
	ctx := ctxFor(w.t)
	obj := w.manifestAt(sha)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[revision.FluxNameLabel], labels[revision.FluxNamespaceLabel] = "apps", w.ns
	obj.SetLabels(labels)
	if err := suite.c.Patch(ctx, obj, client.Apply, client.FieldOwner("kustomize-controller"), client.ForceOwnership); err != nil { //nolint:staticcheck // unstructured apply
		w.t.Fatalf("applying %s: %v", manifest, err)
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(revision.KustomizationGVK)
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: "apps"}, k); err != nil {
		w.t.Fatal(err)
	}
	rev := "main@sha1:" + sha
	_ = unstructured.SetNestedField(k.Object, rev, "status", "lastAppliedRevision")
	_ = unstructured.SetNestedField(k.Object, rev, "status", "lastAttemptedRevision")
	if err := suite.c.Status().Update(ctx, k); err != nil {
		w.t.Fatalf("updating the kustomization status: %v", err)
	}
}

// manifestAt reads the workload's manifest at commit sha, in the world's
// namespace.
func (w *world) manifestAt(sha string) *unstructured.Unstructured {
	w.t.Helper()
	repo, err := gogit.PlainOpen(w.repo.Dir())
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		w.t.Fatal(err)
	}
	f, err := c.File(manifest)
	if err != nil {
		w.t.Fatal(err)
	}
	content, err := f.Contents()
	if err != nil {
		w.t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(content), &obj.Object); err != nil {
		w.t.Fatal(err)
	}
	obj.SetNamespace(w.ns)
	return obj
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
