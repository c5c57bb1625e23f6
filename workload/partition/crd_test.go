package partition

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func obj(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
}

func gameServerSetCRD(label string, updateStrategy apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gameserversets.games.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "games.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "GameServerSet", Plural: "gameserversets"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{
						"replicas":       {Type: "integer"},
						"template":       {Type: "object", XPreserveUnknownFields: ptr(true)},
						"updateStrategy": updateStrategy,
					})},
				}},
			}},
		},
	}
	if label != "" {
		crd.Labels = map[string]string{rolloutsv1beta1.WorkloadTypeLabel: label}
	}
	return crd
}

func ptr[T any](v T) *T { return &v }

func TestCheckCRD(t *testing.T) {
	withPartition := obj(map[string]apiextensionsv1.JSONSchemaProps{
		"type":          {Type: "string"},
		"rollingUpdate": obj(map[string]apiextensionsv1.JSONSchemaProps{"partition": {Type: "integer"}}),
	})
	noPartition := obj(map[string]apiextensionsv1.JSONSchemaProps{
		"type":          {Type: "string"},
		"rollingUpdate": obj(map[string]apiextensionsv1.JSONSchemaProps{"maxUnavailable": {XIntOrString: true}}),
	})
	preserving := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}
	tests := []struct {
		name    string
		crd     *apiextensionsv1.CustomResourceDefinition
		version string
		want    []string // substrings of the reason; none means accepted
	}{
		{"labelled with a partition", gameServerSetCRD("statefulset", withPartition), "v1", nil},
		{"unknown fields kept under updateStrategy", gameServerSetCRD("statefulset", preserving), "v1", nil},
		{"a CRD needs no label: the workload objects carry it", gameServerSetCRD("", withPartition), "v1", nil},
		{"no partition in the schema", gameServerSetCRD("statefulset", noPartition), "v1",
			[]string{"has no spec.updateStrategy.rollingUpdate.partition"}},
		{"version not served", gameServerSetCRD("statefulset", withPartition), "v2", []string{"does not serve version v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckCRD(tt.crd, tt.version)
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("CheckCRD() = %q, want accepted", got)
			}
			if len(tt.want) > 0 && got == "" {
				t.Fatalf("CheckCRD() accepted, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("CheckCRD() = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
