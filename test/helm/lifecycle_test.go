package helm

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestChart_helmInstallUpgradeUninstall_keepsCertificateAndCRDs runs helm
// itself against the control plane: install, upgrade with a changed value,
// uninstall. The manager does not run here (its pods are fake): the test is
// about what helm does with the chart's objects.
func TestChart_helmInstallUpgradeUninstall_keepsCertificateAndCRDs(t *testing.T) {
	const release, ns = "lifecycle", "lifecycle-system"
	name := release + "-sluice"
	helmArgs := func(args ...string) []string {
		return append(args, "--kubeconfig", suite.kubeconfig, "--namespace", ns)
	}
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = runHelm(t, helmArgs("uninstall", release, "--wait")...)
		}
	})

	// When the chart is installed
	if out, err := runHelm(t, helmArgs("install", release, chartDir(), "--create-namespace", "--wait", "--timeout", "2m")...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	// Then the manager runs two pods, the CRDs are served, and the
	// webhooks trust the generated certificate
	d := &appsv1.Deployment{}
	getObj(t, ns, name, d)
	if d.Status.AvailableReplicas != 2 {
		t.Errorf("manager pods available: %d, want 2", d.Status.AvailableReplicas)
	}
	for _, crd := range []string{"rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io"} {
		getObj(t, "", crd, &apiextensionsv1.CustomResourceDefinition{})
	}
	secret := &corev1.Secret{}
	getObj(t, ns, name+"-webhook-cert", secret)
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	getObj(t, "", name, mwc)
	if !bytes.Equal(mwc.Webhooks[0].ClientConfig.CABundle, secret.Data["ca.crt"]) || len(secret.Data["tls.crt"]) == 0 {
		t.Fatalf("the webhook's caBundle is not the Secret's ca.crt")
	}

	// When it is upgraded with another log level
	if out, err := runHelm(t, helmArgs("upgrade", release, chartDir(), "--set", "logLevel=debug", "--wait", "--timeout", "2m")...); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	// Then the manager runs with it, and the certificate is the same
	getObj(t, ns, name, d)
	if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--zap-log-level=debug") {
		t.Errorf("after the upgrade, args %v lack --zap-log-level=debug", d.Spec.Template.Spec.Containers[0].Args)
	}
	after := &corev1.Secret{}
	getObj(t, ns, name+"-webhook-cert", after)
	getObj(t, "", name, mwc)
	if !bytes.Equal(after.Data["tls.crt"], secret.Data["tls.crt"]) || !bytes.Equal(after.Data["ca.crt"], secret.Data["ca.crt"]) ||
		!bytes.Equal(mwc.Webhooks[0].ClientConfig.CABundle, secret.Data["ca.crt"]) {
		t.Errorf("the upgrade replaced the webhook certificate")
	}

	// When it is uninstalled
	if out, err := runHelm(t, helmArgs("uninstall", release, "--wait")...); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	uninstalled = true
	// Then the manager, its RBAC and webhooks are gone, and the CRDs (with
	// every Rollout) stay
	for _, obj := range []struct {
		ns   string
		name string
		obj  client.Object
	}{
		{ns, name, &appsv1.Deployment{}},
		{"", name, &admissionregistrationv1.MutatingWebhookConfiguration{}},
		{"", name, &admissionregistrationv1.ValidatingWebhookConfiguration{}},
		{"", name, &rbacv1.ClusterRole{}},
		{ns, name + "-webhook-cert", &corev1.Secret{}},
	} {
		eventually(t, fmt.Sprintf("%T %s deleted", obj.obj, obj.name), func() (bool, string) {
			err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: obj.ns, Name: obj.name}, obj.obj)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	}
	getObj(t, "", "rollouts.rollouts.kruise.io", &apiextensionsv1.CustomResourceDefinition{})
}

func getObj(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("reading %T %s: %v", obj, name, err)
	}
}
