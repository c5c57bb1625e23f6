package examples

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/workload/batch"
)

// scheme knows sluice's kinds, the built-in ones, CRDs, the Gateway API,
// and the custom kinds the examples define in their crd.yaml (decoded as
// unstructured: the API server checks them against the CRD's schema when
// test/examples applies them).
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, gatewayv1.Install} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	crds, err := filepath.Glob("*/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crds {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Decode(data, s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			crd, ok := o.(*apiextensionsv1.CustomResourceDefinition)
			if !ok {
				t.Fatalf("%s: %T, want only CustomResourceDefinitions", f, o)
			}
			for _, v := range crd.Spec.Versions {
				gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
				s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
			}
		}
	}
	return s
}

// Every YAML file under examples/ decodes strictly into typed objects of
// the kinds sluice knows, and each object names its namespace when its kind
// is namespaced.
func TestExamples_everyYAMLFileDecodesStrictly(t *testing.T) {
	s := scheme(t)
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no YAML files found under examples/")
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Decode(data, s)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if len(objs) == 0 {
				t.Fatal("no objects in file")
			}
			for _, o := range objs {
				if o.GetName() == "" {
					t.Errorf("%T without a name", o)
				}
				if clusterScoped(o) {
					continue
				}
				if o.GetNamespace() == "" {
					t.Errorf("%T %s without a namespace", o, o.GetName())
				}
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []string // kinds
		wantErr string
	}{
		{
			name: "two documents and an empty one",
			data: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# nothing\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
			want: []string{"Namespace", "ConfigMap"},
		},
		{
			name:    "unknown field",
			data:    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replica: 3\n",
			wantErr: "unknown field",
		},
		{
			name:    "misplaced Rollout field",
			data:    "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata:\n  name: a\nspec:\n  strategy:\n    steps: []\n",
			wantErr: "unknown field",
		},
		{
			name:    "unknown kind",
			data:    "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollback\nmetadata:\n  name: a\n",
			wantErr: "Rollback",
		},
		{
			name:    "no kind",
			data:    "metadata:\n  name: a\n",
			wantErr: "apiVersion and kind are required",
		},
		{
			name:    "wrong type",
			data:    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: ten\n",
			wantErr: "replicas",
		},
	}
	s := scheme(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Decode([]byte(tt.data), s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decode() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetObjectKind().GroupVersionKind().Kind)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Decode() kinds = %v, want %v", got, tt.want)
			}
		})
	}
}

// The multi-batch example is what its README and the demo describe: a
// 10-pod Deployment with a 25%/25% rolling update, and a Rollout of it in
// steps 1 / 50% / 100% whose first two steps wait for an approval, using
// nothing this version of sluice ignores.
func TestMultiBatchDeployment_isWhatTheREADMEDescribes(t *testing.T) {
	objs, err := MultiBatchDeployment(scheme(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want a Namespace, a Deployment and a Rollout", len(objs))
	}
	ns, ok1 := objs[0].(*corev1.Namespace)
	d, ok2 := objs[1].(*appsv1.Deployment)
	ro, ok3 := objs[2].(*rolloutsv1beta1.Rollout)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("got %T, %T, %T; want Namespace, Deployment, Rollout in that order", objs[0], objs[1], objs[2])
	}
	for _, o := range []client.Object{d, ro} {
		if o.GetNamespace() != ns.Name {
			t.Errorf("%T %s is in namespace %q, want %q", o, o.GetName(), o.GetNamespace(), ns.Name)
		}
	}

	if d.Name != "checkout" || d.Spec.Replicas == nil || *d.Spec.Replicas != 10 {
		t.Errorf("deployment %s with replicas %v, want checkout with 10", d.Name, d.Spec.Replicas)
	}
	if c := d.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "registry.example/shop/checkout:v1" {
		t.Errorf("containers %+v, want one running registry.example/shop/checkout:v1", c)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil ||
		ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" {
		t.Errorf("strategy %+v, want RollingUpdate 25%%/25%%", d.Spec.Strategy)
	}

	ref := ro.Spec.WorkloadRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("workloadRef %+v does not name the example's Deployment", ref)
	}
	if ro.Spec.Strategy.Canary == nil {
		t.Fatal("rollout has no canary strategy")
	}
	var got []string
	for _, st := range ro.Spec.Strategy.Canary.Steps {
		n, err := batch.DesiredUpdated(st.Replicas, *d.Spec.Replicas)
		if err != nil {
			t.Fatal(err)
		}
		pause := "untimed"
		if st.Pause.Duration != nil {
			pause = fmt.Sprintf("%ds", *st.Pause.Duration)
		}
		got = append(got, fmt.Sprintf("%s/%d/%s", st.Replicas, n, pause))
	}
	want := "1/1/untimed 50%/5/untimed 100%/10/untimed"
	if strings.Join(got, " ") != want {
		t.Errorf("steps (replicas/pods/pause) = %v, want %s", got, want)
	}
	if blocking, ignored := coverage.Analyze(ro); len(blocking)+len(ignored) > 0 {
		t.Errorf("the example uses what sluice does not act on: blocking %v, ignored %v", blocking, ignored)
	}
}

// clusterScoped reports whether o is of a cluster-scoped kind.
func clusterScoped(o client.Object) bool {
	switch o.(type) {
	case *corev1.Namespace, *apiextensionsv1.CustomResourceDefinition:
		return true
	}
	return false
}
