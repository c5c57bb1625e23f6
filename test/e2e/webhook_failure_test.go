package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/env"
)

// warnings collects the warnings the API server relays to a client (an
// admission webhook's warnings among them).
type warnings struct {
	mu  sync.Mutex
	all []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *warnings) HandleWarningHeader(_ int, _, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, text)
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.all, "; ")
}

// Given a StatefulSet held at step 1 of a release whose restore patch
// annotation sluice cannot read (an internal error of the workload
// webhook on every update)
// When a user updates the StatefulSet
// Then the webhook does what its failure policy says: under Ignore (the
// default) the update goes through with a warning naming the error, which
// is also counted in sluice_admission_internal_errors_total; under Fail it
// is refused, naming the annotation.
func TestWebhook_internalError_followsTheFailurePolicy(t *testing.T) {
	k := nativeStatefulSet
	ns := newNamespace(t)
	createWorkload(t, k, ns, "db", 4, v1, 4)
	createRollout(t, rolloutFor(k, ns, "db", step("1", nil), step("100%", nil)))
	setWorkloadImage(t, k, ns, "db", v2)
	waitStep(t, ns, "db", 1, rolloutsv1beta1.CanaryStepStatePaused)

	// sluice's own write (its identity, its field manager) breaks the
	// annotation, as a bug or a partial write might; it is put back at the
	// end so the namespace can go.
	scheme := suite.c.Scheme()
	asSluice, err := client.New(env.ManagerConfig(suite.cfg), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	original := getWorkload(t, k, ns, "db").GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
	setRestorePatch := func(v string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		u.SetNamespace(ns)
		u.SetName("db")
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rolloutsv1beta1.DeploymentOriginalAnnotation: v}}})
		if err := asSluice.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
			t.Fatalf("writing the restore patch as sluice: %v", err)
		}
	}
	setRestorePatch("{not json")
	t.Cleanup(func() { setRestorePatch(original) })

	seen := &warnings{}
	userCfg := rest.CopyConfig(suite.cfg)
	userCfg.WarningHandler = seen
	user, err := client.New(userCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	touch := func(value string) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		u.SetNamespace(ns)
		u.SetName("db")
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"team":%q}}}`, value)
		return user.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-annotate"))
	}

	t.Run("Ignore", func(t *testing.T) {
		if err := touch("shop"); err != nil {
			t.Fatalf("under failurePolicy Ignore, an internal error of the webhook refused the update: %v", err)
		}
		if !strings.Contains(seen.String(), "sluice") || !strings.Contains(seen.String(), rolloutsv1beta1.DeploymentOriginalAnnotation) {
			t.Errorf("warnings %q do not say sluice let the update through, and why", seen)
		}
		eventually(t, "the internal error counted", func() (bool, string) {
			s, err := scrapeMetrics(ctxFor(t))
			if err != nil {
				return false, err.Error()
			}
			v, ok := s.value("sluice_admission_internal_errors_total", map[string]string{"webhook": "workload", "outcome": "allowed"})
			return ok && v >= 1, fmt.Sprintf("value %v, found %v", v, ok)
		})
	})

	t.Run("Fail", func(t *testing.T) {
		restartManager(t, env.ManagerOptions{WorkloadFailurePolicy: "Fail"})
		err := touch("payments")
		if err == nil {
			t.Fatal("under failurePolicy Fail, an update the webhook could not judge went through")
		}
		if !strings.Contains(err.Error(), rolloutsv1beta1.DeploymentOriginalAnnotation) {
			t.Errorf("refusal %q does not name the annotation", err)
		}
	})
}

// restartManager stops the suite's sluice and runs it again with the
// options o until the test ends; then it runs again as the suite's.
func restartManager(t *testing.T, o env.ManagerOptions) {
	t.Helper()
	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	if err := startManagerWith(ctxFor(t), o); err != nil {
		if err := startManager(ctxFor(t)); err != nil {
			t.Errorf("restarting sluice: %v", err)
		}
		t.Fatalf("starting sluice with %+v: %v", o, err)
	}
	t.Cleanup(func() {
		if err := suite.manager.Stop(); err != nil {
			t.Errorf("stopping sluice: %v", err)
		}
		if err := startManager(ctxFor(t)); err != nil {
			t.Errorf("restarting sluice: %v", err)
		}
	})
}
