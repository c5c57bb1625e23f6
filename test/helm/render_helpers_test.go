package helm

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// chartDir is the chart under test.
func chartDir() string { return filepath.Join(suite.root, "charts", "sluice") }

// runHelm runs the pinned helm and returns its output.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), suite.helm, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(err.Error() + ": " + errOut.String())
	}
	return out.String(), nil
}

// rendered is the output of helm template, by kind and name.
type rendered []*unstructured.Unstructured

// render runs helm template for release "sluice" in ns with set values
// ("key=value") and the CRDs, and decodes every object.
func render(t *testing.T, ns string, set ...string) rendered {
	t.Helper()
	args := []string{"template", "sluice", chartDir(), "--namespace", ns, "--include-crds", "--kube-version", suite.kubeVersion}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := runHelm(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v", set, err)
	}
	return decodeAll(t, out)
}

func decodeAll(t *testing.T, manifests string) rendered {
	t.Helper()
	var objs rendered
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding the rendered manifests: %v", err)
		}
		if len(obj) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
}

// find returns the object of kind and name, nil if there is none.
func (r rendered) find(kind, name string) *unstructured.Unstructured {
	for _, o := range r {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// kinds counts the objects by kind.
func (r rendered) kinds() map[string]int {
	out := map[string]int{}
	for _, o := range r {
		out[o.GetKind()]++
	}
	return out
}

// get returns the object of kind and name converted into out.
func (r rendered) get(t *testing.T, kind, name string, out any) {
	t.Helper()
	o := r.find(kind, name)
	if o == nil {
		t.Fatalf("no %s %s rendered; have %v", kind, name, r.kinds())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}
