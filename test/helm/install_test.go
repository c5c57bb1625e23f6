package helm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
)

// releaseNamespace is where the chart is installed, as release "sluice".
const releaseNamespace = "sluice-system"

// TestChart_installed_managerWithServiceAccountToken_releasesWithinRBAC
// installs the rendered chart for real, runs the manager with a token of the
// chart's ServiceAccount and the chart's webhook certificate, releases a
// Deployment in two steps, and checks every API call the manager made
// against the chart's RBAC, both ways.
func TestChart_installed_managerWithServiceAccountToken_releasesWithinRBAC(t *testing.T) {
	ctx := ctxFor(t)
	port := freePort(t)
	webhookURL := fmt.Sprintf("https://127.0.0.1:%d", port)
	// The API server reaches the manager, a local process, by URL; in a
	// cluster it would go through the webhook Service.
	objs := render(t, releaseNamespace, "webhook.url="+webhookURL)
	crds, others := objs.onlyKind("CustomResourceDefinition"), objs.withoutKind("CustomResourceDefinition")

	// Given the release namespace
	createNamespace(t, releaseNamespace)

	// When the rendered manifests are applied with a server-side dry run
	apply(t, crds, true)
	apply(t, others, true)
	// Then the API server accepted them all and created nothing
	err := suite.c.Get(ctx, types.NamespacedName{Namespace: releaseNamespace, Name: "sluice"}, &rbacv1.Role{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("after the dry run, reading the leader election Role: %v, want not found", err)
	}

	// When they are applied for real
	apply(t, crds, false)
	waitEstablished(t, crds)
	apply(t, others, false)
	// Its webhooks outlive the manager this test runs, and the Rollout
	// webhooks fail closed: remove them, for the tests after this one.
	t.Cleanup(func() {
		for _, o := range others {
			if k := o.GetKind(); k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration" {
				err := suite.c.Delete(context.Background(), o.DeepCopy())
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("removing %s %s: %v", k, o.GetName(), err)
				}
			}
		}
	})
	// Then the manager Deployment runs two (fake) pods that the
	// PodDisruptionBudget lets one of go at a time
	eventually(t, "two manager pods available", func() (bool, string) {
		d := getDeployment(t, releaseNamespace, "sluice")
		return d.Status.AvailableReplicas == 2, fmt.Sprintf("%+v", d.Status)
	})
	eventually(t, "the PodDisruptionBudget allows one disruption", func() (bool, string) {
		pdb := &policyv1.PodDisruptionBudget{}
		err := suite.c.Get(ctx, types.NamespacedName{Namespace: releaseNamespace, Name: "sluice"}, pdb)
		return err == nil && pdb.Status.DisruptionsAllowed == 1, fmt.Sprintf("%+v %v", pdb.Status, err)
	})

	// Given the manager run with a token of the chart's ServiceAccount
	cfg, ca := serviceAccountConfig(t, installed)
	rec := newRecorder()
	stop := runManager(t, installed, cfg, rec, port, webhookURL)
	// Then it points the Rollout CRD's conversion at its webhook, with the
	// chart's CA
	eventually(t, "the Rollout CRD's conversion set by the manager", func() (bool, string) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := suite.c.Get(ctx, types.NamespacedName{Name: "rollouts.rollouts.kruise.io"}, crd); err != nil {
			return false, err.Error()
		}
		conv := crd.Spec.Conversion
		ok := conv != nil && conv.Strategy == apiextensionsv1.WebhookConverter && conv.Webhook != nil &&
			conv.Webhook.ClientConfig != nil && conv.Webhook.ClientConfig.URL != nil &&
			*conv.Webhook.ClientConfig.URL == webhookURL+"/convert" && bytes.Equal(conv.Webhook.ClientConfig.CABundle, ca)
		return ok, fmt.Sprintf("%+v", conv)
	})
	// And it leads, through the Lease in the release namespace
	eventually(t, "the manager holds the leader Lease", func() (bool, string) {
		l := &coordinationv1.Lease{}
		err := suite.c.Get(ctx, types.NamespacedName{Namespace: releaseNamespace, Name: "sluice.rollouts.kruise.io"}, l)
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", fmt.Sprint(err)
	})

	releaseInTwoSteps(t)

	// When the manager stops
	stop()
	calls, forbidden := rec.snapshot()
	// Then the API server refused none of its calls
	if len(forbidden) > 0 {
		t.Errorf("the API server refused calls of the manager:\n%v", forbidden)
	}
	assertCallsWithinGrants(t, calls, grantsOf(t, objs))
}

// releaseInTwoSteps releases a Deployment of four pods in two steps, half
// and approval then all, through the installed chart's webhooks.
func releaseInTwoSteps(t *testing.T) {
	const ns, name = "shop", "web"
	createNamespace(t, ns)
	// Given a Deployment of four pods on v1 and a Rollout of it
	createDeployment(t, ns, name, 4, "web:v1")
	if err := suite.c.Create(ctxFor(t), newRollout(ns, name)); err != nil {
		t.Fatalf("creating the Rollout (validated by the chart's webhook): %v", err)
	}
	waitRollout(t, ns, name, "Healthy", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	})
	eventually(t, "the workload-type label on the Deployment", func() (bool, string) {
		d := getDeployment(t, ns, name)
		_, ok := d.Labels[rolloutsv1beta1.WorkloadTypeLabel]
		return ok, fmt.Sprint(d.Labels)
	})

	// When the image changes to v2
	setImage(t, ns, name, "web:v2")
	// Then the chart's workload webhook holds the update and step 1 pauses
	// with two pods on v2 and two on v1
	waitRollout(t, ns, name, "step 1 paused", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.CurrentStepIndex == 1 && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	waitPods(t, ns, name, map[string]int{"web:v1": 2, "web:v2": 2})
	d := getDeployment(t, ns, name)
	if !d.Spec.Paused {
		t.Errorf("the Deployment is not held (paused) between steps")
	}
	if _, ok := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok {
		t.Errorf("the held Deployment has no %s annotation", rolloutsv1beta1.DeploymentOriginalAnnotation)
	}
	// And the v1alpha1 API serves the Rollout, converted by the manager
	// with the chart's certificate
	old, err := v1alpha1Rollout(ctxFor(t), ns, name)
	if err != nil {
		t.Fatalf("reading the Rollout as v1alpha1: %v", err)
	}
	if steps, _, _ := unstructured.NestedSlice(old.Object, "spec", "strategy", "canary", "steps"); len(steps) != 2 {
		t.Errorf("v1alpha1 Rollout steps %v, want 2", steps)
	}

	// When the step is approved
	approve(t, ns, name)
	// Then every pod runs v2 and the Deployment is handed back
	waitRollout(t, ns, name, "Healthy after the release", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepIndex == 2 &&
			ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitPods(t, ns, name, map[string]int{"web:v2": 4})
	eventually(t, "the Deployment handed back", func() (bool, string) {
		d := getDeployment(t, ns, name)
		marks := sluiceMarks(d)
		return !d.Spec.Paused && len(marks) == 0, fmt.Sprintf("paused %v, left %v", d.Spec.Paused, marks)
	})
}

// waitEstablished waits until the API server serves the CRDs.
func waitEstablished(t *testing.T, crds rendered) {
	t.Helper()
	for _, o := range crds {
		eventually(t, "CRD "+o.GetName()+" established", func() (bool, string) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := suite.c.Get(ctxFor(t), types.NamespacedName{Name: o.GetName()}, crd); err != nil {
				return false, err.Error()
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, ""
				}
			}
			return false, fmt.Sprint(crd.Status.Conditions)
		})
	}
}

// installation names an installed release of the chart: the namespace it
// is installed in and the name of its objects.
type installation struct {
	namespace, name string
}

// installed is the release the install test applies: "sluice" in
// releaseNamespace.
var installed = installation{namespace: releaseNamespace, name: "sluice"}

// serviceAccountConfig returns a client configuration with a token of the
// ServiceAccount of the chart installed as in (what kubectl create token
// makes), checking who the API server takes it for, and the chart's
// webhook CA.
func serviceAccountConfig(t *testing.T, in installation) (*rest.Config, []byte) {
	t.Helper()
	ctx := ctxFor(t)
	tr, err := suite.kube.CoreV1().ServiceAccounts(in.namespace).CreateToken(ctx, in.name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token of the ServiceAccount: %v", err)
	}
	cfg := rest.AnonymousClientConfig(suite.cfg)
	cfg.BearerToken = tr.Status.Token
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking who the token is: %v", err)
	}
	if want := "system:serviceaccount:" + in.namespace + ":" + in.name; review.Status.UserInfo.Username != want {
		t.Fatalf("the token is %q, want %q", review.Status.UserInfo.Username, want)
	}
	secret := &corev1.Secret{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: in.namespace, Name: in.name + "-webhook-cert"}, secret); err != nil {
		t.Fatalf("reading the webhook certificate: %v", err)
	}
	return cfg, secret.Data[app.CAFile]
}

// runManager runs the manager of the chart installed as in, in this
// process, as the chart's Deployment configures it, with the certificate
// of the chart's Secret, and returns the function that stops it.
func runManager(t *testing.T, in installation, cfg *rest.Config, rec *recorder, port int, webhookURL string) func() {
	t.Helper()
	dir := t.TempDir()
	secret := &corev1.Secret{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: in.namespace, Name: in.name + "-webhook-cert"}, secret); err != nil {
		t.Fatalf("reading the webhook certificate: %v", err)
	}
	for _, f := range []string{"tls.crt", "tls.key", app.CAFile} {
		if err := os.WriteFile(filepath.Join(dir, f), secret.Data[f], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, cfg, app.Options{
			MetricsAddr: "0", ProbeAddr: "0",
			LeaderElect: true, LeaderElectionNamespace: in.namespace,
			WebhookHost: "127.0.0.1", WebhookPort: port, CertDir: dir,
			WebhookConfigName: in.name, WebhookURL: webhookURL,
			ProgressDeadline: 10 * time.Minute, InProcessRestarts: true,
			Namespace: in.namespace, WrapTransport: rec.wrap, Logger: testLogger(),
		})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the manager did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

// grantsOf returns what the chart's RBAC grants its ServiceAccount: the
// ClusterRoles bound cluster-wide and the Roles bound in their namespace.
func grantsOf(t *testing.T, objs rendered) []grant {
	t.Helper()
	var out []grant
	for _, b := range objs.onlyKind("ClusterRoleBinding") {
		var crb rbacv1.ClusterRoleBinding
		objs.get(t, "ClusterRoleBinding", b.GetName(), &crb)
		var cr rbacv1.ClusterRole
		objs.get(t, "ClusterRole", crb.RoleRef.Name, &cr)
		out = append(out, grant{rules: cr.Rules})
	}
	for _, b := range objs.onlyKind("RoleBinding") {
		var rb rbacv1.RoleBinding
		objs.get(t, "RoleBinding", b.GetName(), &rb)
		var r rbacv1.Role
		objs.get(t, "Role", rb.RoleRef.Name, &r)
		out = append(out, grant{namespace: rb.Namespace, rules: r.Rules})
	}
	return out
}

// assertCallsWithinGrants checks both ways: every call is granted, and
// every granted verb is used or in unexercised with a reason.
func assertCallsWithinGrants(t *testing.T, calls []call, grants []grant) {
	t.Helper()
	used := map[string]bool{}
	for _, c := range calls {
		used[c.Group+"/"+c.Resource+" "+c.Verb] = true
		allowed := basicUser.allows(c)
		for _, g := range grants {
			allowed = allowed || g.allows(c)
		}
		if !allowed {
			t.Errorf("the chart's RBAC does not allow %v", c)
		}
	}
	var unused []string
	for _, g := range grants {
		for _, r := range g.rules {
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, verb := range r.Verbs {
						key := group + "/" + res + " " + verb
						u := unexercised[group+"/"+res]
						if !used[key] && (u.why == "" || !slices.Contains(strings.Fields(u.verbs), verb)) {
							unused = append(unused, key)
						}
					}
				}
			}
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("granted but neither used in the release nor justified in unexercised:\n%v", unused)
	}
	for res, u := range unexercised {
		for _, verb := range strings.Fields(u.verbs) {
			granted := false
			for _, g := range grants {
				for _, r := range g.rules {
					granted = granted || (slices.Contains(r.Verbs, verb) && slices.ContainsFunc(r.APIGroups, func(group string) bool {
						return slices.Contains(r.Resources, strings.TrimPrefix(res, group+"/"))
					}))
				}
			}
			if !granted {
				t.Errorf("unexercised lists %s %s, which the chart does not grant: remove it", res, verb)
			}
			if used[res+" "+verb] {
				t.Logf("%s %s is listed in unexercised but was used in this run", res, verb)
			}
		}
	}
}

// basicUser is what Kubernetes' bootstrap ClusterRole system:basic-user
// grants every authenticated user; the manager asks who it is with it.
var basicUser = grant{rules: []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, Verbs: []string{"create"}},
}}

func ptr[T any](v T) *T { return &v }
