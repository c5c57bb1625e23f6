package appliedcommit

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantRef string
		wantSHA string
		wantErr bool
	}{
		{name: "flux sha1", in: "main@sha1:" + sha, wantRef: "main", wantSHA: sha},
		{name: "flux branch with slash", in: "release/v1@sha1:" + sha, wantRef: "release/v1", wantSHA: sha},
		{name: "flux without ref", in: "sha1:" + sha, wantSHA: sha},
		{name: "flux legacy", in: "main/" + sha, wantRef: "main", wantSHA: sha},
		{name: "bare upper case", in: "0123456789ABCDEF0123456789ABCDEF01234567", wantSHA: sha},
		{name: "sha256", in: "main@sha256:" + sha + sha[:24], wantRef: "main", wantSHA: sha + sha[:24]},
		{name: "short sha", in: "main@sha1:0123456", wantErr: true},
		{name: "oci digest is not a commit", in: "latest@sha256:zz", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "not hex", in: "main@sha1:" + sha[:39] + "g", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, got, err := Parse(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if ref != tt.wantRef || got != tt.wantSHA {
				t.Errorf("Parse(%q) = %q, %q; want %q, %q", tt.in, ref, got, tt.wantRef, tt.wantSHA)
			}
		})
	}
}

func TestArgoCDApplication(t *testing.T) {
	tests := []struct {
		name, tracking, instance string
		wantNS, wantName         string
		wantOK                   bool
	}{
		{name: "tracking id", tracking: "shop:apps/Deployment:shop/checkout", wantNS: "argocd", wantName: "shop", wantOK: true},
		{name: "apps in any namespace", tracking: "team-a_shop:apps/Deployment:shop/checkout", wantNS: "team-a", wantName: "shop", wantOK: true},
		{name: "tracking wins over label", tracking: "shop:apps/Deployment:shop/checkout", instance: "other", wantNS: "argocd", wantName: "shop", wantOK: true},
		{name: "instance label", instance: "shop", wantNS: "argocd", wantName: "shop", wantOK: true},
		{name: "malformed tracking", tracking: "shop", wantOK: false},
		{name: "nothing", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, name, ok := ArgoCDApplication(tt.tracking, tt.instance, "argocd")
			if ok != tt.wantOK || ns != tt.wantNS || name != tt.wantName {
				t.Errorf("got %q %q %v; want %q %q %v", ns, name, ok, tt.wantNS, tt.wantName, tt.wantOK)
			}
		})
	}
}

func kustomization(ns, name, applied string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(KustomizationGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	if applied != "" {
		_ = unstructured.SetNestedField(u.Object, applied, "status", "lastAppliedRevision")
	}
	return u
}

// applying is a Kustomization in the middle of a reconcile of attempted
// (its status as kustomize-controller writes it before the apply), after
// applied.
func applying(ns, name, applied, attempted, reason string) *unstructured.Unstructured {
	u := kustomization(ns, name, applied)
	_ = unstructured.SetNestedField(u.Object, attempted, "status", "lastAttemptedRevision")
	_ = unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"type": "Ready", "status": "Unknown", "reason": reason},
		map[string]any{"type": "Reconciling", "status": "True", "reason": reason},
	}, "status", "conditions")
	return u
}

// checkingHealth is a Kustomization with wait or healthChecks that has
// applied attempted and waits for it to become healthy.
func checkingHealth(ns, name, applied, attempted string) *unstructured.Unstructured {
	u := applying(ns, name, applied, attempted, "Progressing")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Healthy", "status": "Unknown", "reason": "Progressing"})
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	return u
}

func application(ns, name, synced string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ApplicationGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	if synced != "" {
		_ = unstructured.SetNestedField(u.Object, synced, "status", "sync", "revision")
	}
	return u
}

// withPath sets the path the tool applies.
func withPath(u *unstructured.Unstructured, path string, fields ...string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(u.Object, path, fields...)
	return u
}

func TestResolverOf(t *testing.T) {
	other := "89abcdef0123456789abcdef0123456789abcdef"
	objs := []runtime.Object{
		withPath(kustomization("flux-system", "apps", "main@sha1:"+sha), "./apps", "spec", "path"),
		kustomization("flux-system", "pending", ""),
		withPath(application("argocd", "shop", other), "deploy/shop", "spec", "source", "path"),
		applying("flux-system", "applying", "main@sha1:"+sha, "main@sha1:"+other, "Progressing"),
		applying("flux-system", "retrying", "main@sha1:"+sha, "main@sha1:"+other, "ProgressingWithRetry"),
		applying("flux-system", "again", "main@sha1:"+sha, "main@sha1:"+sha, "Progressing"),
		checkingHealth("flux-system", "health", "main@sha1:"+other, "main@sha1:"+sha),
	}
	c := fake.NewClientBuilder().WithRuntimeObjects(objs...).Build()
	workload := func(labels, annotations map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout", Labels: labels, Annotations: annotations}}
	}
	flux := map[string]string{FluxNameLabel: "apps", FluxNamespaceLabel: "flux-system"}
	tests := []struct {
		name      string
		w         *appsv1.Deployment
		o         Options
		want      Revision
		wantNoRev bool
		wantApply bool
		wantErr   bool
	}{
		{name: "flux", w: workload(flux, nil), o: Options{Source: SourceFlux},
			want: Revision{SHA: sha, Ref: "main", Source: SourceFlux, From: "Kustomization flux-system/apps", Path: "./apps"}},
		{name: "flux not applied yet", w: workload(map[string]string{FluxNameLabel: "pending", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, wantNoRev: true, wantErr: true},
		{name: "flux kustomization missing", w: workload(map[string]string{FluxNameLabel: "gone", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, wantNoRev: true, wantErr: true},
		// kustomize-controller applies first and records the revision
		// after: while it applies another one, the last applied one may not
		// be what the workload shows.
		{name: "flux applying another revision", w: workload(map[string]string{FluxNameLabel: "applying", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, wantApply: true, wantErr: true},
		{name: "flux applying, found by Auto", w: workload(map[string]string{FluxNameLabel: "applying", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Annotation: "sluice.dev/revision"}, wantApply: true, wantErr: true},
		{name: "flux retrying a failed revision keeps the applied one", w: workload(map[string]string{FluxNameLabel: "retrying", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, want: Revision{SHA: sha, Ref: "main", Source: SourceFlux, From: "Kustomization flux-system/retrying"}},
		{name: "flux applying the same revision again", w: workload(map[string]string{FluxNameLabel: "again", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, want: Revision{SHA: sha, Ref: "main", Source: SourceFlux, From: "Kustomization flux-system/again"}},
		{name: "flux checking the health of what it applied", w: workload(map[string]string{FluxNameLabel: "health", FluxNamespaceLabel: "flux-system"}, nil),
			o: Options{Source: SourceFlux}, want: Revision{SHA: sha, Ref: "main", Source: SourceFlux, From: "Kustomization flux-system/health"}},
		{name: "argo cd by tracking id", w: workload(nil, map[string]string{ArgoCDTrackingAnnotation: "shop:apps/Deployment:shop/checkout"}),
			o: Options{Source: SourceArgoCD}, want: Revision{SHA: other, Source: SourceArgoCD, From: "Application argocd/shop", Path: "deploy/shop"}},
		{name: "argo cd by instance label", w: workload(map[string]string{ArgoCDInstanceLabel: "shop"}, nil),
			o: Options{Source: SourceArgoCD}, want: Revision{SHA: other, Source: SourceArgoCD, From: "Application argocd/shop", Path: "deploy/shop"}},
		{name: "annotation", w: workload(nil, map[string]string{"sluice.dev/revision": sha}),
			o:    Options{Source: SourceAnnotation, Annotation: "sluice.dev/revision"},
			want: Revision{SHA: sha, Source: SourceAnnotation, From: "annotation sluice.dev/revision"}},
		{name: "annotation with the path beside it", w: workload(nil, map[string]string{"sluice.dev/revision": sha, "sluice.dev/revision-path": "apps/checkout.yaml"}),
			o:    Options{Source: SourceAnnotation, Annotation: "sluice.dev/revision", PathAnnotation: "sluice.dev/revision-path"},
			want: Revision{SHA: sha, Source: SourceAnnotation, From: "annotation sluice.dev/revision", Path: "apps/checkout.yaml"}},
		{name: "annotation invalid", w: workload(nil, map[string]string{"sluice.dev/revision": "v1.2"}),
			o: Options{Source: SourceAnnotation, Annotation: "sluice.dev/revision"}, wantErr: true},
		{name: "auto prefers the annotation", w: workload(flux, map[string]string{"sluice.dev/revision": other}),
			o:    Options{Annotation: "sluice.dev/revision"},
			want: Revision{SHA: other, Source: SourceAnnotation, From: "annotation sluice.dev/revision"}},
		{name: "auto falls back to flux", w: workload(flux, nil), o: Options{Annotation: "sluice.dev/revision"},
			want: Revision{SHA: sha, Ref: "main", Source: SourceFlux, From: "Kustomization flux-system/apps", Path: "./apps"}},
		{name: "auto finds nothing", w: workload(nil, nil), o: Options{Annotation: "sluice.dev/revision"}, wantNoRev: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolver{Reader: c}.Of(context.Background(), tt.w, tt.o)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Of() error = %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrNoRevision) != tt.wantNoRev {
				t.Errorf("Of() error = %v, want ErrNoRevision %v", err, tt.wantNoRev)
			}
			if errors.Is(err, ErrApplying) != tt.wantApply {
				t.Errorf("Of() error = %v, want ErrApplying %v", err, tt.wantApply)
			}
			if got != tt.want {
				t.Errorf("Of() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
