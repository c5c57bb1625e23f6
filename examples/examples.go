// Package examples holds sluice's runnable example manifests, one folder per
// example, and reads them into typed objects. Every YAML file under
// examples/ is parsed strictly by this package's tests; test/examples
// applies and releases every example on the local control plane, as its
// README says; the demo (test/demo) applies the multi-batch-deployment
// example.
package examples

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"path"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed multi-batch-deployment/*.yaml
var manifests embed.FS

// MultiBatchDeploymentDir is the folder of the multi-batch Deployment
// example, relative to examples/.
const MultiBatchDeploymentDir = "multi-batch-deployment"

// MultiBatchDeployment returns the objects of the multi-batch Deployment
// example (Namespace demo, Deployment checkout, Rollout checkout) in the
// order to create them, decoded with scheme.
func MultiBatchDeployment(scheme *runtime.Scheme) ([]client.Object, error) {
	var out []client.Object
	for _, name := range []string{"namespace.yaml", "deployment.yaml", "rollout.yaml"} {
		file := path.Join(MultiBatchDeploymentDir, name)
		data, err := manifests.ReadFile(file)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(data, scheme)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Decode reads the YAML documents in data into typed objects of scheme.
// It is strict: an unknown kind, an unknown or duplicated field, or a value
// of the wrong type is an error. Empty documents are skipped.
func Decode(data []byte, scheme *runtime.Scheme) ([]client.Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []client.Object
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj, err := decodeDocument(doc, scheme)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
}

// decodeDocument decodes one YAML document; it returns nil for an empty one.
func decodeDocument(doc []byte, scheme *runtime.Scheme) (client.Object, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return nil, err
	}
	if len(probe) == 0 {
		return nil, nil
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, errors.New("apiVersion and kind are required")
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(tm.Kind)
	ro, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	obj, ok := ro.(client.Object)
	if !ok {
		return nil, fmt.Errorf("kind %s is not an object with metadata", gvk)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}
