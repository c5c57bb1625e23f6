package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/controllers/webhookrules"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// Given the chart installed by helm, and its manager running with the
// chart's ServiceAccount
// When a Rollout names a StatefulSet-like custom kind, and the release is
// upgraded by helm
// Then the kind's rule lives in a webhook configuration of sluice's own,
// which helm does not own and the upgrade leaves alone, so the kind's
// updates are held before and after it; the chart's configuration keeps
// exactly the chart's rules, written by helm only; and helm uninstall
// takes sluice's own configuration with the chart's (it is owned by it),
// even with the manager gone.
func TestChart_helmUpgrade_keepsTheCustomKindRules(t *testing.T) {
	in := installation{namespace: "rules-system", name: "rules-sluice"}
	const release = "rules"
	port := freePort(t)
	webhookURL := fmt.Sprintf("https://127.0.0.1:%d", port)
	helmArgs := func(args ...string) []string {
		return append(args, "--kubeconfig", suite.kubeconfig, "--namespace", in.namespace)
	}
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = runHelm(t, helmArgs("uninstall", release, "--wait")...)
		}
	})
	if out, err := runHelm(t, helmArgs("install", release, chartDir(), "--create-namespace", "--set", "webhook.url="+webhookURL,
		"--wait", "--timeout", "2m")...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	cfg, _ := serviceAccountConfig(t, in)
	stop := runManager(t, in, cfg, newRecorder(), port, webhookURL)

	installGameServerSetCRD(t)
	createNamespace(t, "rules-apps")
	createGameServerSet(t, "rules-apps", "app")
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rules-apps", Name: "app"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "games.example.com/v1", Kind: "GameServerSet", Name: "app"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{Steps: []rolloutsv1beta1.CanaryStep{
				{Replicas: ptr(intstr.FromInt32(1))}, {Replicas: ptr(intstr.FromString("100%"))},
			}}},
		},
	}
	// The Rollout webhooks fail closed: the create goes through once the
	// manager serves them.
	eventually(t, "the Rollout created through the manager's webhooks", func() (bool, string) {
		err := suite.c.Create(ctxFor(t), ro.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	own := webhookrules.OwnConfigName(in.name)
	waitOwnRule(t, own)
	assertHeldOnImageChange(t, "rules-apps", "app", "v2")
	assertChartRulesOnly(t, in.name)

	// When helm upgrades the release
	if out, err := runHelm(t, helmArgs("upgrade", release, chartDir(), "--set", "webhook.url="+webhookURL, "--set", "logLevel=debug",
		"--wait", "--timeout", "2m")...); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	// Then the rule is still there, and still holds the kind's updates
	waitOwnRule(t, own)
	assertHeldOnImageChange(t, "rules-apps", "app", "v3")
	assertChartRulesOnly(t, in.name)

	// When the manager is gone and helm uninstalls the release
	stop()
	if out, err := runHelm(t, helmArgs("uninstall", release, "--wait")...); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	uninstalled = true
	// Then sluice's own configuration goes with the chart's
	eventually(t, "sluice's own webhook configuration garbage collected", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: own}, &admissionregistrationv1.MutatingWebhookConfiguration{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// installGameServerSetCRD installs the StatefulSet-like custom kind of the
// end-to-end tests and waits until it is served.
func installGameServerSetCRD(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", "partition", "games.example.com_gameserversets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	if err := suite.c.Create(ctxFor(t), crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the CRD: %v", err)
	}
	eventually(t, "the GameServerSet CRD established", func() (bool, string) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprint(got.Status.Conditions)
	})
}

// gameServerSet is the GameServerSet name in ns, labelled StatefulSet-like.
func gameServerSet(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("games.example.com/v1")
	u.SetKind("GameServerSet")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// createGameServerSet creates a GameServerSet of two pods on v1. No
// controller runs it: the test is about what the webhook does to updates.
func createGameServerSet(t *testing.T, ns, name string) {
	t.Helper()
	u := gameServerSet(ns, name)
	u.SetLabels(map[string]string{rolloutsv1beta1.WorkloadTypeLabel: rolloutsv1beta1.WorkloadTypeStatefulSet})
	labels := map[string]any{"app": name}
	u.Object["spec"] = map[string]any{
		"replicas": int64(2),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:v1"}}},
		},
		"updateStrategy": map[string]any{"type": "RollingUpdate"},
	}
	if err := suite.c.Create(ctxFor(t), u); err != nil {
		t.Fatalf("creating the GameServerSet: %v", err)
	}
}

// waitOwnRule waits until sluice's own configuration name holds the rule
// for GameServerSets.
func waitOwnRule(t *testing.T, name string) {
	t.Helper()
	eventually(t, "a GameServerSet rule in "+name, func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: name}, cfg); err != nil {
			return false, err.Error()
		}
		for _, wh := range cfg.Webhooks {
			for _, r := range wh.Rules {
				if len(r.Resources) == 1 && r.Resources[0] == "gameserversets" {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%+v", cfg.Webhooks)
	})
}

// assertHeldOnImageChange changes the GameServerSet's image and checks
// that the workload webhook held the update: the partition set so that no
// pod changes, marked for its Rollout.
func assertHeldOnImageChange(t *testing.T, ns, name, tag string) {
	t.Helper()
	u := gameServerSet(ns, name)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:%s"}]}}}}`, tag)
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("changing the image: %v", err)
	}
	partition, found, _ := unstructured.NestedInt64(u.Object, "spec", "updateStrategy", "rollingUpdate", "partition")
	if !found || partition < 2 || u.GetAnnotations()[rolloutsv1beta1.InProgressingAnnotation] == "" {
		t.Fatalf("the image change to %s was not held: partition %d (found %v), annotations %v", tag, partition, found, u.GetAnnotations())
	}
}

// assertChartRulesOnly checks that the chart's configuration name carries
// the chart's workload rules and that only helm wrote it.
func assertChartRulesOnly(t *testing.T, name string) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := suite.c.Get(ctxFor(t), client.ObjectKey{Name: name}, cfg); err != nil {
		t.Fatal(err)
	}
	for _, wh := range cfg.Webhooks {
		if wh.Name == webhookrules.WorkloadWebhook && !equality.Semantic.DeepEqual(wh.Rules, registration.WorkloadRules()) {
			t.Errorf("the chart's workload webhook has rules %+v, want the chart's", wh.Rules)
		}
	}
	for _, mf := range cfg.ManagedFields {
		if mf.Manager != "helm" {
			t.Errorf("the chart's webhook configuration was written by %s (%s)", mf.Manager, mf.Operation)
		}
	}
}
