package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/fakeoperators"
)

// root is the examples folder, relative to this package.
const root = "../../examples"

var (
	deploymentGVK    = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSetGVK   = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	gameServerSetGVK = schema.GroupVersionKind{Group: "games.example.com", Version: "v1", Kind: "GameServerSet"}
	serviceGVK       = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	ingressGVK       = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}
	httpRouteGVK     = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
)

// example is how one folder under examples/ is released, and what its
// README says the release looks like.
type example struct {
	namespace string
	// workload is the kind and name of the workload; the Rollout and the
	// pods' app label have the same name.
	workload schema.GroupVersionKind
	name     string
	// v1 and v2 are the images before and after the release.
	v1, v2 string
	// replicas is the number of pods.
	replicas int
	// operator runs the workload's kind when Kubernetes itself does not.
	operator func() fakeoperators.Controller
	// steps are the pods on v2 at each paused step (in canary style the new
	// pods come beside the old ones).
	steps []int
	// canaryStyle: the new pods are in an extra Deployment beside all old
	// pods until the end.
	canaryStyle bool
	// atStep checks what the README documents at the paused step (from 1).
	atStep func(t *testing.T, step int)
	// prepare, when set, runs once the example is applied and its Rollout
	// Healthy, before the release; what it returns runs at each paused
	// step, after atStep.
	prepare func(t *testing.T) func(t *testing.T, step int)
	// atEnd checks what the README documents after the release.
	atEnd func(t *testing.T)
}

// examples lists every folder under examples/; a folder without an entry
// fails the test, so that no example goes untested.
var examples = map[string]example{
	"multi-batch-deployment": {
		namespace: "demo", workload: deploymentGVK, name: "checkout", replicas: 10,
		v1: "registry.example/shop/checkout:v1", v2: "registry.example/shop/checkout:v2",
		steps: []int{1, 5},
	},
	"statefulset": {
		namespace: "demo-sts", workload: statefulSetGVK, name: "ledger", replicas: 4,
		v1: "registry.example/bank/ledger:v1", v2: "registry.example/bank/ledger:v2",
		steps: []int{1, 2},
		atStep: func(t *testing.T, step int) {
			wantPartition(t, statefulSetGVK, "demo-sts", "ledger", int64(4-[]int{1, 2}[step-1]))
		},
		atEnd: func(t *testing.T) { wantPartition(t, statefulSetGVK, "demo-sts", "ledger", -1) },
	},
	"statefulset-like-custom-workload": {
		namespace: "demo-games", workload: gameServerSetGVK, name: "arena", replicas: 4,
		v1: "registry.example/games/arena:v1", v2: "registry.example/games/arena:v2",
		operator: func() fakeoperators.Controller { return fakeoperators.StatefulSetLike(gameServerSetGVK, false) },
		steps:    []int{2},
		atStep:   func(t *testing.T, _ int) { wantPartition(t, gameServerSetGVK, "demo-games", "arena", 2) },
		atEnd:    func(t *testing.T) { wantPartition(t, gameServerSetGVK, "demo-games", "arena", -1) },
	},
	"canary-nginx-ingress": {
		namespace: "demo-nginx", workload: deploymentGVK, name: "storefront", replicas: 4, canaryStyle: true,
		v1: "registry.example/shop/storefront:v1", v2: "registry.example/shop/storefront:v2",
		steps: []int{1, 2},
		atStep: func(t *testing.T, step int) {
			canary := getObject(t, ingressGVK, "demo-nginx", "storefront-canary")
			if canary == nil {
				t.Fatalf("step %d: no Ingress storefront-canary", step)
			}
			a := canary.GetAnnotations()
			want := []string{"10", "50"}[step-1]
			if a["nginx.ingress.kubernetes.io/canary"] != "true" || a["nginx.ingress.kubernetes.io/canary-weight"] != want {
				t.Errorf("step %d: Ingress storefront-canary annotations %v, want canary true and weight %s", step, a, want)
			}
			wantCanaryService(t, "demo-nginx", "storefront")
		},
		atEnd: func(t *testing.T) {
			wantGone(t, ingressGVK, "demo-nginx", "storefront-canary")
			wantGone(t, serviceGVK, "demo-nginx", "storefront-canary")
		},
	},
	"gateway-api": {
		namespace: "demo-gateway", workload: deploymentGVK, name: "catalog", replicas: 4, canaryStyle: true,
		v1: "registry.example/shop/catalog:v1", v2: "registry.example/shop/catalog:v2",
		steps: []int{1, 3},
		atStep: func(t *testing.T, step int) {
			w := []int64{20, 60}[step-1]
			wantBackends(t, "demo-gateway", "catalog", map[string]int64{"catalog": 100 - w, "catalog-canary": w})
			wantCanaryService(t, "demo-gateway", "catalog")
		},
		atEnd: func(t *testing.T) {
			wantBackends(t, "demo-gateway", "catalog", map[string]int64{"catalog": -1})
			wantGone(t, serviceGVK, "demo-gateway", "catalog-canary")
		},
	},
	"canary-prometheus-gate": {
		namespace: "demo-analysis", workload: deploymentGVK, name: "storefront", replicas: 4,
		v1: "registry.example/shop/storefront:v1", v2: "registry.example/shop/storefront:v2",
		steps:   []int{1, 2},
		prepare: prometheusGate,
	},
	"ab-testing-header": {
		namespace: "demo-ab", workload: deploymentGVK, name: "checkout", replicas: 4, canaryStyle: true,
		v1: "registry.example/shop/checkout:v1", v2: "registry.example/shop/checkout:v2",
		steps: []int{1, 2},
		atStep: func(t *testing.T, step int) {
			route := getObject(t, httpRouteGVK, "demo-ab", "checkout")
			raw, _ := json.Marshal(route.Object["spec"])
			hasMatch := strings.Contains(string(raw), `"x-user-group"`)
			if step == 1 && !hasMatch {
				t.Errorf("step 1: HTTPRoute checkout has no rule matching x-user-group: %s", raw)
			}
			if step == 2 {
				wantBackends(t, "demo-ab", "checkout", map[string]int64{"checkout": 50, "checkout-canary": 50})
			}
		},
		atEnd: func(t *testing.T) {
			wantBackends(t, "demo-ab", "checkout", map[string]int64{"checkout": -1})
			wantGone(t, serviceGVK, "demo-ab", "checkout-canary")
		},
	},
}

// coveredElsewhere lists the example folders another package's test applies
// and releases as their README says, with that test's name: the GitOps
// examples need a Git server, a fake GitHub and a stand-in for Flux or Argo
// CD, which test/gitops has.
var coveredElsewhere = map[string]string{
	"gitops-flux":   "test/gitops TestExample_gitopsFlux_releasesWithLabels",
	"gitops-argocd": "test/gitops TestExample_gitopsArgoCD_releasesWithLabels",
}

func TestExamples_everyFolderIsCovered(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		seen++
		_, ok := examples[e.Name()]
		if _, elsewhere := coveredElsewhere[e.Name()]; elsewhere {
			if ok {
				t.Errorf("examples/%s has an entry in test/examples and in coveredElsewhere: keep one", e.Name())
			}
			ok = true
		}
		if !ok {
			t.Errorf("examples/%s has no entry in test/examples: add one that releases it as its README says", e.Name())
		}
		if _, err := os.Stat(filepath.Join(root, e.Name(), "README.md")); err != nil {
			t.Errorf("examples/%s has no README.md", e.Name())
		}
	}
	for dir, where := range coveredElsewhere {
		pkg, name, _ := strings.Cut(where, " ")
		files, _ := filepath.Glob(filepath.Join(root, "..", pkg, "*_test.go"))
		found := false
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || strings.Contains(string(data), "func "+name+"(t *testing.T)")
		}
		if !found {
			t.Errorf("examples/%s: coveredElsewhere names %s, which does not exist", dir, where)
		}
	}
	if seen != len(examples)+len(coveredElsewhere) {
		t.Errorf("%d example folders, %d entries: remove the entries of folders that are gone", seen, len(examples))
	}
}

// Given an example applied as its README says
// When its workload's image changes to v2
// Then the release pauses at each step with the documented pods and
// objects, and after the approvals ends with every pod on v2 and the
// documented state.
func TestExamples_releaseAsDocumented(t *testing.T) {
	for dir, ex := range examples {
		t.Run(dir, func(t *testing.T) {
			releaseExample(t, dir, ex)
		})
	}
}

func releaseExample(t *testing.T, dir string, ex example) {
	if ex.operator != nil {
		op, err := fakeoperators.Start(ctxFor(t), suite.cfg, ex.namespace, ex.operator())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = op.Stop() })
	}
	apply(t, filepath.Join(root, dir))
	deleteNamespace(t, ex.namespace)
	waitPods(t, ex.namespace, ex.name, "before the release", map[string]int{ex.v1: ex.replicas})
	waitRollout(t, ex.namespace, ex.name, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == "Healthy"
	})

	var prepared func(t *testing.T, step int)
	if ex.prepare != nil {
		prepared = ex.prepare(t)
	}
	setImage(t, ex.workload, ex.namespace, ex.name, ex.v2)
	for i, updated := range ex.steps {
		step := i + 1
		ro := waitPaused(t, ex.namespace, ex.name, int32(step)) //nolint:gosec // a handful of steps
		want := map[string]int{ex.v1: ex.replicas - updated, ex.v2: updated}
		if ex.canaryStyle {
			want[ex.v1] = ex.replicas
		}
		waitPods(t, ex.namespace, ex.name, "step "+ro.Status.CanaryStatus.Message, want)
		if ex.atStep != nil {
			ex.atStep(t, step)
		}
		if prepared != nil {
			prepared(t, step)
		}
		approve(t, ro)
	}
	waitCompleted(t, ex.namespace, ex.name)
	waitPods(t, ex.namespace, ex.name, "after the release", map[string]int{ex.v2: ex.replicas})
	if ex.atEnd != nil {
		ex.atEnd(t)
	}
}

// wantPartition checks the workload's partition; -1 means none.
func wantPartition(t *testing.T, gvk schema.GroupVersionKind, ns, name string, want int64) {
	t.Helper()
	u := getObject(t, gvk, ns, name)
	got, found, _ := unstructured.NestedInt64(u.Object, "spec", "updateStrategy", "rollingUpdate", "partition")
	if !found {
		got = -1
	}
	if got != want {
		t.Errorf("%s %s: partition %d, want %d (-1: none)", gvk.Kind, name, got, want)
	}
}

// wantGone checks that sluice removed an object it created.
func wantGone(t *testing.T, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	eventually(t, gvk.Kind+" "+name+" removed", func() (bool, string) {
		return getObject(t, gvk, ns, name) == nil, "still there"
	})
}

// wantCanaryService checks that <name>-canary selects only the new pods.
func wantCanaryService(t *testing.T, ns, name string) {
	t.Helper()
	svc := getObject(t, serviceGVK, ns, name+"-canary")
	if svc == nil {
		t.Fatalf("no Service %s-canary", name)
	}
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	if sel["app"] != name || len(sel) < 2 {
		t.Errorf("Service %s-canary selects %v, want app=%s and the new revision", name, sel, name)
	}
}

// wantBackends checks the weights of the backendRefs of the HTTPRoute's
// rules without matches; weight -1 means unset.
func wantBackends(t *testing.T, ns, name string, want map[string]int64) {
	t.Helper()
	route := getObject(t, httpRouteGVK, ns, name)
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		if _, matched := rule["matches"]; matched {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(rule, "backendRefs")
		got := map[string]int64{}
		for _, ref := range refs {
			m, _ := ref.(map[string]any)
			n, _ := m["name"].(string)
			w, ok := m["weight"].(int64)
			if !ok {
				w = -1
			}
			got[n] = w
		}
		if len(got) != len(want) {
			t.Errorf("HTTPRoute %s backendRefs %v, want %v", name, got, want)
			continue
		}
		for n, w := range want {
			if got[n] != w {
				t.Errorf("HTTPRoute %s backendRefs %v, want %v", name, got, want)
			}
		}
	}
}
