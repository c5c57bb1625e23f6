// Package appliedcommit finds which commit a workload is being released from: the
// revision the GitOps tool that applied it last applied (Flux's
// Kustomization, Argo CD's Application), or an annotation on the workload
// naming it. The Flux and Argo CD objects are read as unstructured objects,
// by the fields their published schemas define, so sluice needs neither
// project's Go module.
package appliedcommit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/commitid"
)

// Source names where a revision was found.
type Source string

// The sources of a revision.
const (
	// SourceAnnotation is an annotation on the workload.
	SourceAnnotation Source = "Annotation"
	// SourceFlux is a Flux Kustomization's status.lastAppliedRevision.
	SourceFlux Source = "Flux"
	// SourceArgoCD is an Argo CD Application's status.sync.revision.
	SourceArgoCD Source = "ArgoCD"
	// SourceAuto tries the annotation, Flux and Argo CD in that order.
	SourceAuto Source = "Auto"
)

// Labels and annotations that tie a workload to its GitOps tool.
const (
	// FluxNameLabel and FluxNamespaceLabel name the Kustomization that
	// applied an object (kustomize-controller sets them).
	FluxNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	FluxNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
	// ArgoCDTrackingAnnotation is Argo CD's default resource tracking:
	// "<app>:<group>/<kind>:<namespace>/<name>".
	ArgoCDTrackingAnnotation = "argocd.argoproj.io/tracking-id"
	// ArgoCDInstanceLabel is Argo CD's label tracking: the Application's
	// name.
	ArgoCDInstanceLabel = "app.kubernetes.io/instance"
	// DefaultArgoCDNamespace is where Argo CD's Applications live by default.
	DefaultArgoCDNamespace = "argocd"
)

// The kinds read.
var (
	// KustomizationGVK is Flux's Kustomization.
	KustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	// ApplicationGVK is Argo CD's Application.
	ApplicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}
)

// ErrNoRevision is returned when the workload names no revision the source
// can read (no labels, no annotation, a status without a revision yet).
var ErrNoRevision = errors.New("no revision found")

// ErrApplying is returned while the GitOps tool is applying a revision other
// than the one it last recorded as applied: kustomize-controller applies
// first and records status.lastAppliedRevision at the end of its reconcile,
// so in between the workload may already be the new revision's. Ask again
// in a moment.
var ErrApplying = errors.New("the GitOps tool is applying a revision")

// Revision is the commit a workload is released from.
type Revision struct {
	// SHA is the commit's full hexadecimal SHA (40 or 64 characters).
	SHA string
	// Ref is the branch or tag the tool named, when it did ("main").
	Ref string
	// Source is where it was read.
	Source Source
	// From names the object it was read from ("Kustomization flux-system/apps").
	From string
	// Path is the directory of the repository the tool applies
	// (Kustomization spec.path, Application spec.source.path), as the tool
	// names it ("./apps"); empty when unknown (an annotation) or the whole
	// repository. The commits that changed it are the ones that can change
	// the workload.
	Path string
}

// Options say where to look.
type Options struct {
	// Source is Auto, Flux, ArgoCD or Annotation; empty means Auto.
	Source Source
	// Annotation is the workload annotation read by Annotation and Auto.
	Annotation string
	// PathAnnotation is the workload annotation that gives the revision
	// read from Annotation its Path; empty reads none.
	PathAnnotation string
	// ArgoCDNamespace is where Applications live when the tracking id does
	// not say; empty means DefaultArgoCDNamespace.
	ArgoCDNamespace string
}

// Resolver reads revisions through a Kubernetes client.
type Resolver struct {
	// Reader reads Kustomizations and Applications.
	Reader client.Reader
}

// Of returns the revision workload is released from. It returns an error
// wrapping ErrNoRevision when the workload names none.
func (r Resolver) Of(ctx context.Context, workload client.Object, o Options) (Revision, error) {
	switch o.Source {
	case SourceAnnotation:
		return fromAnnotation(workload, o.Annotation, o.PathAnnotation)
	case SourceFlux:
		return r.fromFlux(ctx, workload)
	case SourceArgoCD:
		return r.fromArgoCD(ctx, workload, o.ArgoCDNamespace)
	case SourceAuto, "":
	default:
		return Revision{}, fmt.Errorf("unknown revision source %q", o.Source)
	}
	var errs []error
	for _, try := range []func() (Revision, error){
		func() (Revision, error) { return fromAnnotation(workload, o.Annotation, o.PathAnnotation) },
		func() (Revision, error) { return r.fromFlux(ctx, workload) },
		func() (Revision, error) { return r.fromArgoCD(ctx, workload, o.ArgoCDNamespace) },
	} {
		rev, err := try()
		if err == nil {
			return rev, nil
		}
		if !errors.Is(err, ErrNoRevision) {
			return Revision{}, err
		}
		errs = append(errs, err)
	}
	return Revision{}, errors.Join(errs...)
}

func fromAnnotation(w client.Object, key, pathKey string) (Revision, error) {
	if key == "" {
		return Revision{}, fmt.Errorf("%w: no revision annotation configured", ErrNoRevision)
	}
	v, ok := w.GetAnnotations()[key]
	if !ok {
		return Revision{}, fmt.Errorf("%w: no annotation %s", ErrNoRevision, key)
	}
	ref, sha, err := Parse(v)
	if err != nil {
		return Revision{}, fmt.Errorf("annotation %s: %w", key, err)
	}
	rev := Revision{SHA: sha, Ref: ref, Source: SourceAnnotation, From: "annotation " + key}
	if pathKey != "" {
		rev.Path = w.GetAnnotations()[pathKey]
	}
	return rev, nil
}

func (r Resolver) fromFlux(ctx context.Context, w client.Object) (Revision, error) {
	name, ns := w.GetLabels()[FluxNameLabel], w.GetLabels()[FluxNamespaceLabel]
	if name == "" || ns == "" {
		return Revision{}, fmt.Errorf("%w: no %s and %s labels", ErrNoRevision, FluxNameLabel, FluxNamespaceLabel)
	}
	from := "Kustomization " + ns + "/" + name
	u, err := r.get(ctx, KustomizationGVK, ns, name)
	if err != nil {
		return Revision{}, fmt.Errorf("%s: %w", from, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	if v == "" {
		return Revision{}, fmt.Errorf("%w: %s has applied no revision yet", ErrNoRevision, from)
	}
	if attempted, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision"); attempted != "" && attempted != v && fluxCondition(u, "Reconciling", "True") {
		if !fluxCondition(u, "Healthy", "Unknown") {
			return Revision{}, fmt.Errorf("%w: %s is applying %s (last applied %s)", ErrApplying, from, attempted, v)
		}
		// Checking the health of what it applied (wait or healthChecks):
		// the attempted revision is on the cluster, and is recorded as
		// applied only once healthy, which a held release is not.
		v = attempted
	}
	ref, sha, err := Parse(v)
	if err != nil {
		return Revision{}, fmt.Errorf("%s status.lastAppliedRevision: %w", from, err)
	}
	path, _, _ := unstructured.NestedString(u.Object, "spec", "path")
	return Revision{SHA: sha, Ref: ref, Source: SourceFlux, From: from, Path: path}, nil
}

// fluxCondition tells whether a Flux object's condition of type has status
// for the reason Progressing: a reconcile under way (not
// ProgressingWithRetry, a failed attempt waiting to be retried).
func fluxCondition(u *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			return m["status"] == status && m["reason"] == "Progressing"
		}
	}
	return false
}

func (r Resolver) fromArgoCD(ctx context.Context, w client.Object, defaultNS string) (Revision, error) {
	if defaultNS == "" {
		defaultNS = DefaultArgoCDNamespace
	}
	ns, name, ok := ArgoCDApplication(w.GetAnnotations()[ArgoCDTrackingAnnotation], w.GetLabels()[ArgoCDInstanceLabel], defaultNS)
	if !ok {
		return Revision{}, fmt.Errorf("%w: no %s annotation or %s label", ErrNoRevision, ArgoCDTrackingAnnotation, ArgoCDInstanceLabel)
	}
	from := "Application " + ns + "/" + name
	u, err := r.get(ctx, ApplicationGVK, ns, name)
	if err != nil {
		return Revision{}, fmt.Errorf("%s: %w", from, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "status", "sync", "revision")
	if v == "" {
		return Revision{}, fmt.Errorf("%w: %s has synced no revision yet (multi-source Applications are not read)", ErrNoRevision, from)
	}
	ref, sha, err := Parse(v)
	if err != nil {
		return Revision{}, fmt.Errorf("%s status.sync.revision: %w", from, err)
	}
	path, _, _ := unstructured.NestedString(u.Object, "spec", "source", "path")
	return Revision{SHA: sha, Ref: ref, Source: SourceArgoCD, From: from, Path: path}, nil
}

func (r Resolver) get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: it does not exist", ErrNoRevision)
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w: %s is not served by this cluster", ErrNoRevision, gvk.Kind)
	case err != nil:
		return nil, err
	}
	return u, nil
}

// ArgoCDApplication returns the namespace and name of the Application that
// tracks an object, from its tracking id ("<app>:<group>/<kind>:<ns>/<name>",
// where <app> is "<namespace>_<name>" for Applications outside Argo CD's own
// namespace) or else its instance label. ok is false when neither names one.
func ArgoCDApplication(trackingID, instance, defaultNS string) (ns, name string, ok bool) {
	app := instance
	if trackingID != "" {
		a, _, found := strings.Cut(trackingID, ":")
		if !found || a == "" {
			return "", "", false
		}
		app = a
	}
	if app == "" {
		return "", "", false
	}
	if n, a, found := strings.Cut(app, "_"); found && n != "" && a != "" {
		return n, a, true
	}
	return defaultNS, app, true
}

// Parse reads a revision as Flux and Argo CD write it: "main@sha1:<hex>",
// "sha256:<hex>", the legacy Flux "main/<hex>", or a bare hex SHA. It
// returns the ref (empty when not named) and the SHA in lower case.
func Parse(v string) (ref, sha string, err error) {
	v = strings.TrimSpace(v)
	rest := v
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		ref, rest = rest[:i], rest[i+1:]
	}
	switch {
	case strings.HasPrefix(rest, "sha1:"):
		rest = strings.TrimPrefix(rest, "sha1:")
	case strings.HasPrefix(rest, "sha256:"):
		rest = strings.TrimPrefix(rest, "sha256:")
	case ref == "":
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			ref, rest = rest[:i], rest[i+1:]
		}
	}
	// Flux writes the SHA in lower case; an upper-case one is read too.
	sha = strings.ToLower(rest)
	if !commitid.Valid(sha) {
		return "", "", fmt.Errorf("revision %q names no commit SHA", v)
	}
	return ref, sha, nil
}
