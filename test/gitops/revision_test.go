package gitops

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
)

// The revision is read from fields the real Flux and Argo CD CRDs define
// (the status is written by hand here; the stories have real Flux write it):
// the API server keeps them in the status (a field a schema does not define
// would be pruned), and the resolver finds the commit through the labels
// and annotations the tools put on what they apply.
func TestRevision_readsFluxAndArgoCDObjectsWithTheirRealSchemas(t *testing.T) {
	ctx := ctxFor(t)
	ns := "revision-" + rand.String(6)
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	const fluxSHA, argoSHA = "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"

	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(appliedcommit.KustomizationGVK)
	k.SetNamespace(ns)
	k.SetName("apps")
	// Suspended: the package's real kustomize-controller leaves it, and the
	// status written here by hand, alone.
	k.Object["spec"] = map[string]any{"interval": "1m", "prune": true, "suspend": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": "shop"}}
	mustCreate(t, k)
	// A merge patch of the one field: kustomize-controller writes the
	// object too (its finalizer, the suspended condition), so an update of
	// what was read here may conflict.
	statusPatch := []byte(`{"status":{"lastAppliedRevision":"main@sha1:` + fluxSHA + `"}}`)
	if err := suite.c.Status().Patch(ctx, k, client.RawPatch(types.MergePatchType, statusPatch)); err != nil {
		t.Fatal(err)
	}

	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(appliedcommit.ApplicationGVK)
	app.SetNamespace(ns)
	app.SetName("shop")
	app.Object["spec"] = map[string]any{
		"project":     "default",
		"source":      map[string]any{"repoURL": "https://github.com/acme/shop.git", "path": "apps", "targetRevision": "main"},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns},
	}
	mustCreate(t, app)
	_ = unstructured.SetNestedField(app.Object, argoSHA, "status", "sync", "revision")
	_ = unstructured.SetNestedField(app.Object, "Synced", "status", "sync", "status")
	if err := suite.c.Update(ctx, app); err != nil { // Argo CD's Application has no status subresource
		t.Fatal(err)
	}

	r := appliedcommit.Resolver{Reader: suite.c}
	tests := []struct {
		name        string
		labels, ann map[string]string
		o           appliedcommit.Options
		want        appliedcommit.Revision
	}{
		{name: "flux labels", labels: map[string]string{appliedcommit.FluxNameLabel: "apps", appliedcommit.FluxNamespaceLabel: ns},
			o:    appliedcommit.Options{Source: appliedcommit.SourceFlux},
			want: appliedcommit.Revision{SHA: fluxSHA, Ref: "main", Source: appliedcommit.SourceFlux, From: "Kustomization " + ns + "/apps"}},
		{name: "argo cd tracking id", ann: map[string]string{appliedcommit.ArgoCDTrackingAnnotation: "shop:apps/Deployment:" + ns + "/checkout"},
			o:    appliedcommit.Options{Source: appliedcommit.SourceArgoCD, ArgoCDNamespace: ns},
			want: appliedcommit.Revision{SHA: argoSHA, Source: appliedcommit.SourceArgoCD, From: "Application " + ns + "/shop", Path: "apps"}},
		{name: "argo cd instance label, found by Auto", labels: map[string]string{appliedcommit.ArgoCDInstanceLabel: "shop"},
			o:    appliedcommit.Options{ArgoCDNamespace: ns, Annotation: "sluice.dev/revision"},
			want: appliedcommit.Revision{SHA: argoSHA, Source: appliedcommit.SourceArgoCD, From: "Application " + ns + "/shop", Path: "apps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "checkout", Labels: tt.labels, Annotations: tt.ann}}
			got, err := r.Of(ctx, d, tt.o)
			if err != nil || got != tt.want {
				t.Fatalf("Of() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
