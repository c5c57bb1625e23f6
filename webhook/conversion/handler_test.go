package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/yaml"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// review sends objects to the conversion handler as the API server does
// and returns the converted objects.
func review(t *testing.T, h http.Handler, desired string, objects ...[]byte) []map[string]any {
	t.Helper()
	req := apiextensionsv1.ConversionReview{Request: &apiextensionsv1.ConversionRequest{UID: "1", DesiredAPIVersion: desired}}
	for _, o := range objects {
		req.Request.Objects = append(req.Request.Objects, runtime.RawExtension{Raw: o})
	}
	body, _ := json.Marshal(req)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	var resp apiextensionsv1.ConversionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Response == nil {
		t.Fatalf("response %q: %v", rec.Body.String(), err)
	}
	if resp.Response.Result.Status != "Success" || resp.Response.UID != "1" {
		t.Fatalf("conversion failed: %+v", resp.Response.Result)
	}
	var out []map[string]any
	for _, o := range resp.Response.ConvertedObjects {
		m := map[string]any{}
		if err := json.Unmarshal(o.Raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// Given the conversion webhook as the manager serves it
// When the API server sends it the seed's v1alpha1 Rollout to store, and
// then the stored form to read as v1alpha1
// Then it answers with the v1beta1 form, and then with the manifest as
// written.
func TestHandler_convertsBothWays(t *testing.T) {
	s := runtime.NewScheme()
	if err := rolloutsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := rolloutsv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := Converter(s)
	if err != nil {
		t.Fatal(err)
	}
	reg := crconversion.NewRegistry()
	if err := reg.RegisterConverter(rolloutsv1beta1.GroupVersion.WithKind("Rollout").GroupKind(), c); err != nil {
		t.Fatal(err)
	}
	h := crconversion.NewWebhookHandler(s, reg)

	raw, err := os.ReadFile("../../test/e2e/testdata/v1alpha1/rollouts-canary-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	stored := review(t, h, "rollouts.kruise.io/v1beta1", manifest)[0]
	if stored["apiVersion"] != "rollouts.kruise.io/v1beta1" {
		t.Fatalf("apiVersion %v", stored["apiVersion"])
	}
	if ref, _, _ := unstructured.NestedString(stored, "spec", "workloadRef", "name"); ref != "echoserver" {
		t.Fatalf("stored spec %v", stored["spec"])
	}
	storedJSON, _ := json.Marshal(stored)
	read := review(t, h, "rollouts.kruise.io/v1alpha1", storedJSON)[0]

	want := map[string]any{}
	if err := json.Unmarshal(manifest, &want); err != nil {
		t.Fatal(err)
	}
	gotSpec, _ := json.Marshal(read["spec"])
	wantSpec, _ := json.Marshal(want["spec"])
	gotMeta, _ := json.Marshal(read["metadata"])
	wantMeta, _ := json.Marshal(want["metadata"])
	if string(gotSpec) != string(wantSpec) || string(gotMeta) != string(wantMeta) {
		t.Fatalf("read back as v1alpha1:\nspec %s\nmeta %s\nwant:\nspec %s\nmeta %s", gotSpec, gotMeta, wantSpec, wantMeta)
	}
}
