package lua

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

var vsKind = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}

// newVS is the VirtualService reviews of namespace shop, routing to the
// Service reviews.
func newVS(t *testing.T) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": specOf(t, reviewsVS)}}
	u.SetGroupVersionKind(vsKind)
	u.SetNamespace("shop")
	u.SetName("reviews")
	u.SetLabels(map[string]string{"app": "reviews"})
	return u
}

func newRouter(t *testing.T, objs ...client.Object) (*Router, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	return routerOf(t, c, Options{}), c
}

// routerOf is the Router of the VirtualService reviews through c, with
// opts.
func routerOf(t *testing.T, c client.Client, opts Options) *Router {
	t.Helper()
	r, err := New(c, c, traffic.Target{Namespace: "shop", Rollout: "reviews", Ref: rolloutsv1beta1.TrafficRoutingRef{Service: "reviews"}},
		rolloutsv1beta1.ObjectRef{APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Name: "reviews"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func getVS(t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(vsKind)
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "shop", Name: "reviews"}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// ensure calls EnsureRoutes until it reports converged, at most 3 times,
// and returns how many calls changed the object.
func ensure(t *testing.T, r *Router, d traffic.Desired) int {
	t.Helper()
	for i := range 3 {
		ok, err := r.EnsureRoutes(context.Background(), d)
		if err != nil {
			t.Fatalf("EnsureRoutes: %v", err)
		}
		if ok {
			return i
		}
	}
	t.Fatal("EnsureRoutes never converged")
	return 0
}

func TestRouter_routesEachStepFromTheOriginal_andRestoresIt(t *testing.T) {
	r, c := newRouter(t, newVS(t))
	original := getVS(t, c)
	d := traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary", Weight: ptr.To[int32](20)}

	if n := ensure(t, r, d); n != 1 {
		t.Fatalf("20%%: %d changes, want 1", n)
	}
	vs := getVS(t, c)
	if same, _ := sameJSON(vs.Object["spec"], specOf(t, `
hosts: [reviews]
http:
- route:
  - {destination: {host: reviews, port: {number: 80}}, weight: 80}
  - {destination: {host: reviews-canary, port: {number: 80}}, weight: 20}
`)); !same {
		t.Fatalf("20%%: spec %v", vs.Object["spec"])
	}
	var rec record
	if err := json.Unmarshal([]byte(vs.GetAnnotations()[OriginalAnnotation]), &rec); err != nil {
		t.Fatalf("record: %v", err)
	}
	want := record{Data: Data{Spec: original.Object["spec"].(map[string]any), Labels: original.GetLabels()}, Rollout: "reviews"}
	if same, _ := sameJSON(rec.Applied, vs.Object["spec"]); !same {
		t.Fatalf("record: applied %v, want the spec written", rec.Applied)
	}
	rec.Applied = nil
	if same, _ := sameJSON(rec, want); !same {
		t.Fatalf("record %+v, want the original spec and labels", rec)
	}

	// The next step starts from the original spec, not from the last one.
	d.Weight = ptr.To[int32](50)
	if n := ensure(t, r, d); n != 1 {
		t.Fatalf("50%%: %d changes, want 1", n)
	}
	if w, _, _ := unstructured.NestedSlice(getVS(t, c).Object, "spec", "http"); len(w) != 1 || len(w[0].(map[string]any)["route"].([]any)) != 2 {
		t.Fatalf("50%%: http %v, want one route of two destinations", w)
	}

	for i := range 3 {
		done, err := r.Finalize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if done {
			if i != 1 {
				t.Fatalf("Finalize done after %d calls, want 2", i+1)
			}
			break
		}
	}
	got := getVS(t, c)
	if !apiequality.Semantic.DeepEqual(got.Object["spec"], original.Object["spec"]) || len(got.GetAnnotations()) != 0 {
		t.Fatalf("restored spec %v annotations %v, want %v and none", got.Object["spec"], got.GetAnnotations(), original.Object["spec"])
	}
}

func TestRouter_errors(t *testing.T) {
	d := traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary", Weight: ptr.To[int32](20)}
	t.Run("the object is missing", func(t *testing.T) {
		r, _ := newRouter(t)
		if _, err := r.EnsureRoutes(context.Background(), d); err == nil || !strings.Contains(err.Error(), "VirtualService reviews not found") {
			t.Fatalf("err = %v", err)
		}
		if done, err := r.Finalize(context.Background()); !done || err != nil {
			t.Fatalf("Finalize of a missing object: %v %v, want done", done, err)
		}
	})
	t.Run("a ConfigMap script replaces the built-in one, and its error is returned", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: ConfigMapName},
			Data: map[string]string{"lua.traffic.routing.VirtualService.networking.istio.io": `error("no weights on " .. obj.stableService)`}}
		_, c := newRouter(t, newVS(t), cm)
		_, err := routerOf(t, c, Options{Namespace: "ops"}).EnsureRoutes(context.Background(), d)
		var serr *ScriptError
		if !errors.As(err, &serr) || !strings.Contains(err.Error(), "no weights on reviews") || !strings.Contains(err.Error(), "ConfigMap ops/"+ConfigMapName) {
			t.Fatalf("err = %v, want the script's message naming the ConfigMap", err)
		}
		if _, ok := getVS(t, c).GetAnnotations()[OriginalAnnotation]; ok {
			t.Fatal("a failing script recorded the original")
		}
		// In another namespace the built-in script runs.
		if _, err := routerOf(t, c, Options{Namespace: "elsewhere"}).EnsureRoutes(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an object another Rollout changes", func(t *testing.T) {
		vs := newVS(t)
		vs.SetAnnotations(map[string]string{OriginalAnnotation: `{"spec":{"hosts":["old"]},"rollout":"other"}`})
		r, c := newRouter(t, vs)
		if _, err := r.EnsureRoutes(context.Background(), d); !errors.Is(err, traffic.ErrConflict) || !strings.Contains(err.Error(), "Rollout other") {
			t.Fatalf("err = %v, want a conflict naming Rollout other", err)
		}
		if done, err := r.Finalize(context.Background()); !done || err != nil {
			t.Fatalf("Finalize: %v %v, want done without a change", done, err)
		}
		got := getVS(t, c)
		if same, _ := sameJSON(got.Object["spec"], specOf(t, reviewsVS)); !same || got.GetAnnotations()[OriginalAnnotation] == "" {
			t.Fatalf("the other Rollout's object was changed: %v %v", got.Object["spec"], got.GetAnnotations())
		}
	})
	t.Run("a record written by OpenKruise is taken over", func(t *testing.T) {
		vs := newVS(t)
		vs.SetAnnotations(map[string]string{OriginalAnnotation: `{"spec":{"hosts":["reviews"],"http":[{"route":[{"destination":{"host":"reviews"}}]}]}}`})
		r, c := newRouter(t, vs)
		ensure(t, r, d)
		if _, err := r.Finalize(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := getVS(t, c)
		if same, _ := sameJSON(got.Object["spec"], specOf(t, "hosts: [reviews]\nhttp: [{route: [{destination: {host: reviews}}]}]")); !same || len(got.GetAnnotations()) != 0 {
			t.Fatalf("restored %v %v, want the recorded spec", got.Object["spec"], got.GetAnnotations())
		}
	})
	t.Run("a kind without a script", func(t *testing.T) {
		r, _ := newRouter(t)
		r.gvk = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Route"}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		u.SetGroupVersionKind(r.gvk)
		u.SetNamespace("shop")
		u.SetName("reviews")
		if err := r.client.Create(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		if _, err := r.EnsureRoutes(context.Background(), d); err == nil || !strings.Contains(err.Error(), "add the key lua.traffic.routing.Route.example.com to ConfigMap sluice-system/kruise-rollout-configuration") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a bad apiVersion", func(t *testing.T) {
		_, err := New(nil, nil, traffic.Target{}, rolloutsv1beta1.ObjectRef{APIVersion: "a/b/c", Kind: "X", Name: "x"}, Options{})
		if err == nil {
			t.Fatal("no error")
		}
	})
}
