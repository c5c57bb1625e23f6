package app

import (
	"context"
	"errors"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/ownwrites"
)

// rolloutCRD is the Rollout CRD storing storage, having stored stored.
func rolloutCRD(storage string, stored ...string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "rollouts.rollouts.kruise.io"}}
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == storage})
	}
	crd.Status.StoredVersions = stored
	return crd
}

func TestStorageGuard_opensTheCacheOnlyOnceEveryObjectIsStoredAsV1beta1(t *testing.T) {
	tests := []struct {
		name        string
		crd         *apiextensionsv1.CustomResourceDefinition
		converts    bool
		wantOpen    bool
		wantStored  []string
		wantWritten int
	}{
		{name: "stored as v1beta1 only: open, nothing written", crd: rolloutCRD("v1beta1", "v1beta1"), converts: true,
			wantOpen: true, wantStored: []string{"v1beta1"}},
		{name: "v1alpha1 stored, conversion served: every object written again, then open", crd: rolloutCRD("v1beta1", "v1alpha1", "v1beta1"),
			converts: true, wantOpen: true, wantStored: []string{"v1beta1"}, wantWritten: 2},
		{name: "v1alpha1 stored, no conversion yet: closed, nothing written", crd: rolloutCRD("v1beta1", "v1alpha1", "v1beta1"),
			wantStored: []string{"v1alpha1", "v1beta1"}},
		{name: "the CRD stores v1alpha1 (an older CRD applied again): closed", crd: rolloutCRD("v1alpha1", "v1alpha1", "v1beta1"),
			converts: true, wantStored: []string{"v1alpha1", "v1beta1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			scheme, err := Scheme()
			if err != nil {
				t.Fatal(err)
			}
			if err := apiextensionsv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			written := 0
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(tt.crd,
					&rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web"}},
					&rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "db"}}).
				WithStatusSubresource(&rolloutsv1beta1.Rollout{}, &apiextensionsv1.CustomResourceDefinition{}).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					if _, ok := obj.(*rolloutsv1beta1.Rollout); ok {
						written++
					}
					return c.SubResource(sub).Patch(ctx, obj, p, opts...)
				}}).Build()
			gate := &ownwrites.Gate{}
			seen := cacheSeen{}
			g := newStorageGuard(c, c, c, gate, &ownwrites.Gate{}, seen)
			g.probe = func(context.Context) error {
				if !tt.converts {
					return errors.New("not converted")
				}
				return nil
			}
			err = g.guard(ctx, g.crds[0])
			if gate.Opened() != tt.wantOpen || (err == nil) != tt.wantOpen {
				t.Fatalf("gate open %v (err %v), want %v", gate.Opened(), err, tt.wantOpen)
			}
			if cached, ok := seen[tt.crd.Name]; !ok || cached != tt.wantOpen {
				t.Errorf("sluice_cached_reads recorded %v (recorded: %v), want %v", cached, ok, tt.wantOpen)
			}
			if written != tt.wantWritten {
				t.Errorf("%d Rollouts written again, want %d", written, tt.wantWritten)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: tt.crd.Name}, crd); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(crd.Status.StoredVersions, tt.wantStored) {
				t.Errorf("storedVersions %v, want %v", crd.Status.StoredVersions, tt.wantStored)
			}
		})
	}
}

// cacheSeen records what the guard reports of each CRD.
type cacheSeen map[string]bool

func (s cacheSeen) CachedReads(crd string, cached bool) { s[crd] = cached }
