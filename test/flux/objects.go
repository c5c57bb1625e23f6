package flux

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
)

// The Flux kinds the helpers write.
var (
	// GitRepositoryGVK is source-controller's GitRepository.
	GitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	// KustomizationGVK is kustomize-controller's Kustomization.
	KustomizationGVK = appliedcommit.KustomizationGVK
)

// ReconcileRequestAnnotation asks a Flux controller to reconcile an object
// now (what `flux reconcile` writes): any new value triggers one.
const ReconcileRequestAnnotation = "reconcile.fluxcd.io/requestedAt"

// Defaults of the objects the helpers create: short, so that a test sees a
// push applied, and drift corrected, within seconds.
const (
	DefaultInterval = 2 * time.Second
	// applyTimeout bounds WaitApplied when ctx has no earlier deadline.
	applyTimeout = 3 * time.Minute
)

// GitRepository describes a source-controller GitRepository.
type GitRepository struct {
	// Namespace and Name name the object.
	Namespace, Name string
	// URL is the repository's clone URL (a test/gitserver Repo's URL).
	URL string
	// Branch is the branch to follow; empty means main.
	Branch string
	// Interval is how often the branch is fetched; zero means
	// DefaultInterval.
	Interval time.Duration
}

// Kustomization describes a kustomize-controller Kustomization with
// pruning, applying a path of a GitRepository in the same namespace.
type Kustomization struct {
	// Namespace and Name name the object.
	Namespace, Name string
	// Source is the name of the GitRepository in Namespace.
	Source string
	// Path is the folder of the repository to apply ("./apps").
	Path string
	// TargetNamespace, when set, is the namespace of every namespaced object
	// applied (Flux's spec.targetNamespace); empty means the manifests name
	// their namespaces.
	TargetNamespace string
	// Interval is how often the path is applied again, new commit or not:
	// every apply is a server-side apply that puts back what drifted from
	// Git. Zero means DefaultInterval.
	Interval time.Duration
	// NoPrune keeps objects that left Git; by default they are deleted.
	NoPrune bool
	// Suspend creates the Kustomization suspended.
	Suspend bool
}

// CreateGitRepository creates g.
func (f *Flux) CreateGitRepository(ctx context.Context, g GitRepository) error {
	branch, interval := g.Branch, g.Interval
	if branch == "" {
		branch = "main"
	}
	if interval == 0 {
		interval = DefaultInterval
	}
	u := newObject(GitRepositoryGVK, g.Namespace, g.Name)
	u.Object["spec"] = map[string]any{
		"url":      g.URL,
		"ref":      map[string]any{"branch": branch},
		"interval": interval.String(),
		"timeout":  "30s",
	}
	if err := f.c.Create(ctx, u); err != nil {
		return fmt.Errorf("creating GitRepository %s/%s: %w", g.Namespace, g.Name, err)
	}
	return nil
}

// CreateKustomization creates k.
func (f *Flux) CreateKustomization(ctx context.Context, k Kustomization) error {
	interval := k.Interval
	if interval == 0 {
		interval = DefaultInterval
	}
	u := newObject(KustomizationGVK, k.Namespace, k.Name)
	u.Object["spec"] = map[string]any{
		"interval":      interval.String(),
		"retryInterval": interval.String(),
		"timeout":       "1m",
		"path":          k.Path,
		"prune":         !k.NoPrune,
		"suspend":       k.Suspend,
		"sourceRef":     map[string]any{"kind": GitRepositoryGVK.Kind, "name": k.Source},
	}
	if k.TargetNamespace != "" {
		u.Object["spec"].(map[string]any)["targetNamespace"] = k.TargetNamespace
	}
	if err := f.c.Create(ctx, u); err != nil {
		return fmt.Errorf("creating Kustomization %s/%s: %w", k.Namespace, k.Name, err)
	}
	return nil
}

// Suspend suspends the Kustomization: kustomize-controller applies nothing
// for it, and corrects no drift, until Resume. A reconcile already under way
// finishes.
func (f *Flux) Suspend(ctx context.Context, namespace, name string) error {
	return f.setSuspend(ctx, namespace, name, true)
}

// Resume lifts a Suspend and asks for a reconcile at once, as `flux resume`
// does.
func (f *Flux) Resume(ctx context.Context, namespace, name string) error {
	if err := f.setSuspend(ctx, namespace, name, false); err != nil {
		return err
	}
	return f.RequestReconcile(ctx, KustomizationGVK, namespace, name)
}

func (f *Flux) setSuspend(ctx context.Context, namespace, name string, suspend bool) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}})
	if err != nil {
		return err
	}
	if err := f.c.Patch(ctx, newObject(KustomizationGVK, namespace, name), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting spec.suspend of Kustomization %s/%s to %t: %w", namespace, name, suspend, err)
	}
	return nil
}

// RequestReconcile asks the controller of the Flux object (GitRepositoryGVK
// or KustomizationGVK) to reconcile it now, through
// ReconcileRequestAnnotation.
func (f *Flux) RequestReconcile(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		ReconcileRequestAnnotation: time.Now().Format(time.RFC3339Nano),
	}}})
	if err != nil {
		return err
	}
	if err := f.c.Patch(ctx, newObject(gvk, namespace, name), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotating %s %s/%s with %s: %w", gvk.Kind, namespace, name, ReconcileRequestAnnotation, err)
	}
	return nil
}

// Reapply has the Kustomization reconcile once more, now, and waits until
// kustomize-controller reports it handled that request
// (status.lastHandledReconcileAt): with drift correction, that is one more
// apply of the revision it has, whatever the live objects hold.
func (f *Flux) Reapply(ctx context.Context, namespace, name string) error {
	token := time.Now().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		ReconcileRequestAnnotation: token,
	}}})
	if err != nil {
		return err
	}
	k := newObject(KustomizationGVK, namespace, name)
	if err := f.c.Patch(ctx, k, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotating Kustomization %s/%s with %s: %w", namespace, name, ReconcileRequestAnnotation, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			return false, nil //nolint:nilerr // polled again until the deadline
		}
		last, _, _ = unstructured.NestedString(k.Object, "status", "lastHandledReconcileAt")
		return last == token, nil
	})
	if err != nil {
		return fmt.Errorf("Kustomization %s/%s did not handle the reconcile request %s (last handled %q): %w; %s",
			namespace, name, token, last, err, f.describe(ctx, namespace, name))
	}
	return nil
}

// Sync asks for the GitRepository to fetch and the Kustomization to apply
// now, instead of at their next interval.
func (f *Flux) Sync(ctx context.Context, namespace, gitRepository, kustomization string) error {
	if err := f.RequestReconcile(ctx, GitRepositoryGVK, namespace, gitRepository); err != nil {
		return err
	}
	return f.RequestReconcile(ctx, KustomizationGVK, namespace, kustomization)
}

// AppliedRevision returns the commit SHA of the Kustomization's
// status.lastAppliedRevision, "" when it has applied none.
func (f *Flux) AppliedRevision(ctx context.Context, namespace, name string) (string, error) {
	return f.revisionOf(ctx, KustomizationGVK, namespace, name, "status", "lastAppliedRevision")
}

// FetchedRevision returns the commit SHA of the GitRepository's
// status.artifact.revision (the commit source-controller fetched last), ""
// when it has fetched none.
func (f *Flux) FetchedRevision(ctx context.Context, namespace, name string) (string, error) {
	return f.revisionOf(ctx, GitRepositoryGVK, namespace, name, "status", "artifact", "revision")
}

// revisionOf reads the Flux revision ("main@sha1:<hex>") at path of an
// object and returns its SHA.
func (f *Flux) revisionOf(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, path ...string) (string, error) {
	u := newObject(gvk, namespace, name)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return "", fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, path...)
	if v == "" {
		return "", nil
	}
	_, sha, err := appliedcommit.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%s %s/%s %s: %w", gvk.Kind, namespace, name, strings.Join(path, "."), err)
	}
	return sha, nil
}

// WaitApplied waits until the Kustomization's status.lastAppliedRevision is
// commit sha (full SHA), within ctx and at most three minutes. Its error
// quotes the Kustomization's and its source's conditions, and a controller
// that exited.
func (f *Flux) WaitApplied(ctx context.Context, namespace, name, sha string) error {
	err := f.waitRevision(ctx, sha, func(ctx context.Context) (string, error) { return f.AppliedRevision(ctx, namespace, name) })
	if err != nil {
		return fmt.Errorf("waiting for Kustomization %s/%s to apply %s: %w; %s", namespace, name, sha, err, f.describe(ctx, namespace, name))
	}
	return nil
}

// WaitFetched waits until the GitRepository's artifact is commit sha, within
// ctx and at most three minutes.
func (f *Flux) WaitFetched(ctx context.Context, namespace, name, sha string) error {
	err := f.waitRevision(ctx, sha, func(ctx context.Context) (string, error) { return f.FetchedRevision(ctx, namespace, name) })
	if err != nil {
		g := newObject(GitRepositoryGVK, namespace, name)
		_ = f.c.Get(context.WithoutCancel(ctx), client.ObjectKeyFromObject(g), g)
		return fmt.Errorf("waiting for GitRepository %s/%s to fetch %s: %w; conditions: %s", namespace, name, sha, err, conditions(g))
	}
	return nil
}

// waitRevision polls read until it returns sha, failing when a controller
// exits or the wait times out (with the last value seen).
func (f *Flux) waitRevision(ctx context.Context, sha string, read func(context.Context) (string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	var last string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := f.Failed(); err != nil {
			return false, err
		}
		got, err := read(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = "revision " + got
		return got == sha, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last seen: %s)", err, last)
	}
	return nil
}

// describe quotes the conditions of the Kustomization and its
// GitRepository, for errors.
func (f *Flux) describe(ctx context.Context, namespace, name string) string {
	ctx = context.WithoutCancel(ctx)
	k := newObject(KustomizationGVK, namespace, name)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		return err.Error()
	}
	out := "Kustomization conditions: " + conditions(k)
	src, _, _ := unstructured.NestedString(k.Object, "spec", "sourceRef", "name")
	g := newObject(GitRepositoryGVK, namespace, src)
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(g), g); err == nil {
		out += "; GitRepository conditions: " + conditions(g)
	}
	return out
}

// conditions renders status.conditions as "Type=Status (Reason: Message)".
func conditions(u *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := ""
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"])
	}
	if out == "" {
		return "none"
	}
	return out
}

func newObject(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
