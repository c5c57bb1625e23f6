package partition

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotStatefulSetLike is wrapped by CheckCustomKind's errors for a kind
// whose CRD does not make it a StatefulSet-like kind sluice can release.
var ErrNotStatefulSetLike = errors.New("not a StatefulSet-like kind")

// crdGVK is the kind of CustomResourceDefinitions.
var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// requiredFields are the fields a StatefulSet-like kind must declare in its
// schema, as OpenKruise Rollouts documents for custom workloads.
var requiredFields = [][]string{
	{"spec", "replicas"},
	{"spec", "template"},
	{"spec", "updateStrategy", "rollingUpdate", "partition"},
}

// CheckCustomKind reports whether gvk is a StatefulSet-like custom kind:
// its CRD exists and declares spec.replicas, spec.template and
// spec.updateStrategy.rollingUpdate.partition in the schema of gvk's
// version. The error wraps ErrNotStatefulSetLike and says what to change,
// or is the error reading the CRD. mapper, when not nil, finds the CRD's
// name directly; without, the CRDs of the group are listed.
func CheckCustomKind(ctx context.Context, reader client.Reader, mapper meta.RESTMapper, gvk schema.GroupVersionKind) error {
	crd, err := FindCRD(ctx, reader, mapper, gvk.GroupKind())
	if err != nil {
		return err
	}
	if why := CheckCRD(crd, gvk.Version); why != "" {
		return fmt.Errorf("%s: %w", why, ErrNotStatefulSetLike)
	}
	return nil
}

// FindCRD reads the CustomResourceDefinition of kind gk. It returns an
// error wrapping ErrNotStatefulSetLike when there is none.
func FindCRD(ctx context.Context, reader client.Reader, mapper meta.RESTMapper, gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
	var names []string
	if mapper != nil {
		if m, err := mapper.RESTMapping(gk); err == nil {
			names = append(names, m.Resource.Resource+"."+gk.Group)
		}
	}
	if len(names) == 0 {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
		if err := reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing CustomResourceDefinitions: %w", err)
		}
		for _, item := range list.Items {
			if strings.HasSuffix(item.Name, "."+gk.Group) {
				names = append(names, item.Name)
			}
		}
	}
	for _, name := range names {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		if err := reader.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("decoding CustomResourceDefinition %s: %w", name, err)
		}
		if crd.Spec.Group == gk.Group && crd.Spec.Names.Kind == gk.Kind {
			return crd, nil
		}
	}
	return nil, fmt.Errorf("no CustomResourceDefinition defines kind %s: %w", gk, ErrNotStatefulSetLike)
}

// CheckCRD says why crd does not make its kind, in version, a
// StatefulSet-like kind sluice can release, or returns "" when it does.
func CheckCRD(crd *apiextensionsv1.CustomResourceDefinition, version string) string {
	var served *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Name == version && v.Served {
			served = v
		}
	}
	if served == nil {
		return fmt.Sprintf("CustomResourceDefinition %s does not serve version %s", crd.Name, version)
	}
	var props *apiextensionsv1.JSONSchemaProps
	if served.Schema != nil {
		props = served.Schema.OpenAPIV3Schema
	}
	var missing []string
	for _, path := range requiredFields {
		if !declares(props, path) {
			missing = append(missing, strings.Join(path, "."))
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("the schema of CustomResourceDefinition %s (version %s) has no %s; a StatefulSet-like kind needs "+
			"spec.replicas, spec.template and spec.updateStrategy.rollingUpdate.partition (honoured by its controller)",
			crd.Name, version, strings.Join(missing, ", "))
	}
	return ""
}

// declares reports whether the schema props lets an object carry path: each
// level is a declared property, or sits under a level that keeps unknown
// fields.
func declares(props *apiextensionsv1.JSONSchemaProps, path []string) bool {
	for _, key := range path {
		if props == nil {
			return false
		}
		next, ok := props.Properties[key]
		if !ok {
			return props.XPreserveUnknownFields != nil && *props.XPreserveUnknownFields
		}
		props = &next
	}
	return props != nil
}
