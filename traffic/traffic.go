// Package traffic defines how sluice shifts requests between the stable and
// the new revision of a workload during a release. Each kind of route has
// its own provider package (traffic/ingress, traffic/gateway, ...) behind
// the Provider interface; traffic/service keeps the Services the routes
// point at; traffic/providers is the one table of the kinds of routes,
// which builds them for a trafficRoutings entry; traffic/drive drives
// them, for the Rollout and the TrafficRouting controllers alike.
package traffic

import (
	"context"
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// ErrUnsupported is wrapped by errors for routes this version of sluice
// cannot drive; the message says which and why.
var ErrUnsupported = errors.New("unsupported")

// ErrConflict is wrapped by errors for routes another Rollout already
// changes, or objects sluice would create that belong to someone else.
var ErrConflict = errors.New("conflict")

// Desired is what the routes of one provider should carry: the share of
// requests and the requests that go to the new revision.
type Desired struct {
	// StableService is the Service that selects the stable pods: the
	// Service the routes point at before the release.
	StableService string

	// CanaryService is the Service that selects the new revision's pods:
	// <service>-canary, or StableService itself when the Rollout sets
	// disableGenerateCanaryService.
	CanaryService string

	// Weight is the percentage (0-100) of the requests that no match
	// selects which goes to the new revision; nil sends none by weight.
	Weight *int32

	// Matches send the requests they match to the new revision. Matches are
	// ORed; the conditions inside one match are ANDed.
	Matches []rolloutsv1beta1.HttpRouteMatch

	// RequestHeaderModifier changes the headers of the requests sent to the
	// new revision.
	RequestHeaderModifier *rolloutsv1beta1.HTTPHeaderFilter
}

// Provider shifts traffic through one kind of route (an Ingress, a Gateway
// API route, a custom object) for one trafficRoutings entry. Both methods
// are idempotent: called again with nothing left to do they change nothing
// and report true.
type Provider interface {
	// EnsureRoutes makes the routes carry desired. It reports true when they
	// already did, so nothing was changed: after a change the caller waits
	// the grace period and calls again.
	EnsureRoutes(ctx context.Context, desired Desired) (converged bool, err error)

	// Finalize gives the routes back as they were before the release, so
	// that all requests go to the stable Service. It reports true once
	// nothing is left to restore.
	Finalize(ctx context.Context) (done bool, err error)
}

// Services keeps the two Services of one trafficRoutings entry: the user's
// stable Service, narrowed to the stable pods while a release runs, and
// the canary Service sluice creates beside it. Every method is idempotent
// and reports true when nothing had to change.
type Services interface {
	// NarrowStable makes the stable Service select only the pods whose label
	// has the value revision (the stable revision).
	NarrowStable(ctx context.Context, label, revision string) (converged bool, err error)

	// RestoreStable gives the stable Service back exactly the selector it had
	// before the release.
	RestoreStable(ctx context.Context) (done bool, err error)

	// EnsureCanary creates or updates the canary Service: a copy of the
	// stable Service that selects only the pods whose label has the value
	// revision (the new revision).
	EnsureCanary(ctx context.Context, label, revision string) (converged bool, err error)

	// RemoveCanary deletes the canary Service.
	RemoveCanary(ctx context.Context) (done bool, err error)
}

// Target is what a provider needs to know about the Rollout it works for.
type Target struct {
	// Namespace of the Rollout, its Services and its routes.
	Namespace string

	// Rollout is the name of the Rollout; it marks what sluice changes, so
	// that two Rollouts never take the same route.
	Rollout string

	// Owner references the Rollout; objects sluice creates (the canary
	// Service and Ingress) are owned by it.
	Owner metav1.OwnerReference

	// Ref is the trafficRoutings entry.
	Ref rolloutsv1beta1.TrafficRoutingRef

	// DisableCanaryService is the Rollout's disableGenerateCanaryService:
	// no canary Service is created and the stable one is not narrowed.
	DisableCanaryService bool
}

// CanaryServiceName is the name of the canary Service of the stable Service
// named stable.
func CanaryServiceName(stable string) string {
	return stable + "-canary"
}

// CanaryServiceOf is the Service the routes of t send the new revision's
// requests to.
func CanaryServiceOf(t Target) string {
	if t.DisableCanaryService {
		return t.Ref.Service
	}
	return CanaryServiceName(t.Ref.Service)
}

// OwnedBy reports whether refs name owner (by UID when owner has one).
func OwnedBy(refs []metav1.OwnerReference, owner metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.Kind == owner.Kind && r.Name == owner.Name && (owner.UID == "" || r.UID == owner.UID) {
			return true
		}
	}
	return false
}

// CopyableLabels returns the labels of an object sluice copies (a Service,
// an Ingress) that the copy may carry: those of GitOps tools that would
// take the copy for one of their own objects, and prune it, are left out.
func CopyableLabels(labels map[string]string) map[string]string {
	return copyable(labels, []string{"app.kubernetes.io/instance"}, []string{"kustomize.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/"})
}

// CopyableAnnotations returns the annotations of an object sluice copies
// that the copy may carry: kubectl's last-applied configuration, GitOps
// tracking and sluice's own records are left out.
func CopyableAnnotations(annotations map[string]string) map[string]string {
	return copyable(annotations,
		[]string{"kubectl.kubernetes.io/last-applied-configuration", "argocd.argoproj.io/tracking-id", "argocd.argoproj.io/sync-options"},
		[]string{"sluice.dev/", "kustomize.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/", "meta.helm.sh/"})
}

func copyable(in map[string]string, drop, dropPrefixes []string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		for _, p := range dropPrefixes {
			keep = keep && !strings.HasPrefix(k, p)
		}
		if keep {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
