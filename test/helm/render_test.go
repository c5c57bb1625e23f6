package helm

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// valueSets are the value sets the chart is linted and rendered with.
var valueSets = map[string][]string{
	"defaults":     nil,
	"cert-manager": {"webhook.certificate.source=cert-manager", "metrics.serviceMonitor.enabled=true"},
	"cert-manager-issuer": {"webhook.certificate.source=cert-manager", "webhook.certManager.issuerRef.name=corp-ca",
		"webhook.certManager.issuerRef.kind=ClusterIssuer"},
	"receiver-ingress": {"gitops.receiver.enabled=true", "gitops.receiver.ingress.enabled=true",
		"gitops.receiver.ingress.host=sluice.example.com"},
	"web-view": {"webView.enabled=true", "webView.tokenSecret=sluice-web-token"},
	"single-replica-url": {"replicas=1", "leaderElection.enabled=false", "webhook.url=https://127.0.0.1:9443",
		"logLevel=debug", "image.pullPolicy=Always", "webhook.workloadFailurePolicy=Fail"},
	"fail-closed": {"webhook.workloadFailurePolicy=Fail"},
}

func TestChart_lint_everyValueSet(t *testing.T) {
	for name, set := range valueSets {
		t.Run(name, func(t *testing.T) {
			args := []string{"lint", chartDir(), "--strict", "--kube-version", suite.kubeVersion}
			for _, s := range set {
				args = append(args, "--set", s)
			}
			out, err := runHelm(t, args...)
			if err != nil || !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint %v: %v\n%s", set, err, out)
			}
		})
	}
}

func TestChart_lint_rejectsBadValues(t *testing.T) {
	for _, set := range []string{"webhook.certificate.source=vault", "webhook.workloadFailurePolicy=Sometimes"} {
		if _, err := runHelm(t, "template", "sluice", chartDir(), "--kube-version", suite.kubeVersion, "--set", set); err == nil {
			t.Errorf("helm template --set %s: rendered, want an error", set)
		}
	}
}

func TestChart_template_objectsPerValueSet(t *testing.T) {
	tests := []struct {
		name    string
		want    map[string]int
		absent  []string
		checkFn func(t *testing.T, r rendered)
	}{
		{name: "defaults", want: map[string]int{
			"CustomResourceDefinition": crdCount(t), "ServiceAccount": 1, "ClusterRole": 2, "ClusterRoleBinding": 2,
			"Role": 2, "RoleBinding": 2, "Service": 2, "Deployment": 1, "PodDisruptionBudget": 1, "Secret": 1,
			"MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1,
		}, absent: []string{"ServiceMonitor", "Certificate", "Issuer", "Ingress"}},
		{name: "cert-manager", want: map[string]int{"Certificate": 1, "Issuer": 1, "ServiceMonitor": 1},
			absent: []string{"Secret"}, checkFn: func(t *testing.T, r rendered) {
				m := r.find("MutatingWebhookConfiguration", "sluice")
				if got := m.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "sluice-system/sluice-webhook" {
					t.Errorf("inject-ca-from = %q, want sluice-system/sluice-webhook", got)
				}
			}},
		{name: "web-view", want: map[string]int{"Service": 3}, checkFn: func(t *testing.T, r rendered) {
			var d appsv1.Deployment
			r.get(t, "Deployment", "sluice", &d)
			c := d.Spec.Template.Spec.Containers[0]
			for _, a := range []string{"--web-bind-address=:8082", "--web-token-file=/etc/sluice/web-token/token"} {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %v lack %s", c.Args, a)
				}
			}
			if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "web" && p.ContainerPort == 8082 }) {
				t.Errorf("ports %v lack web 8082", c.Ports)
			}
			if !slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
				return v.Secret != nil && v.Secret.SecretName == "sluice-web-token"
			}) {
				t.Errorf("volumes %v lack the token Secret", d.Spec.Template.Spec.Volumes)
			}
			var svc corev1.Service
			r.get(t, "Service", "sluice-web", &svc)
			if svc.Spec.Ports[0].TargetPort.StrVal != "web" {
				t.Errorf("web Service ports %+v", svc.Spec.Ports)
			}
		}},
		{name: "cert-manager-issuer", want: map[string]int{"Certificate": 1}, absent: []string{"Issuer", "Secret"}},
		{name: "receiver-ingress", want: map[string]int{"Service": 3, "Ingress": 1}, checkFn: func(t *testing.T, r rendered) {
			var d appsv1.Deployment
			r.get(t, "Deployment", "sluice", &d)
			c := d.Spec.Template.Spec.Containers[0]
			if !slices.Contains(c.Args, "--github-webhook-bind-address=:9292") {
				t.Errorf("args %v do not turn the receiver on", c.Args)
			}
			if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "receiver" && p.ContainerPort == 9292 }) {
				t.Errorf("ports %v lack receiver 9292", c.Ports)
			}
			var ing networkingv1.Ingress
			r.get(t, "Ingress", "sluice-receiver", &ing)
			rule := ing.Spec.Rules[0]
			// The prefix exposes every host's endpoint and nothing else.
			path := rule.HTTP.Paths[0].Path
			for _, p := range []string{app.GitHubWebhookPath, app.GiteaWebhookPath, app.GitLabWebhookPath} {
				if !strings.HasPrefix(p, path+"/") {
					t.Errorf("ingress path %s does not expose %s", path, p)
				}
			}
			if rule.Host != "sluice.example.com" || path != "/hook" ||
				rule.HTTP.Paths[0].Backend.Service.Name != "sluice-receiver" {
				t.Errorf("ingress rule %+v", rule)
			}
		}},
		{name: "fail-closed", want: map[string]int{"MutatingWebhookConfiguration": 1, "PodDisruptionBudget": 1},
			checkFn: func(t *testing.T, r rendered) {
				// The API server and the manager fail the same way: the
				// webhook's failurePolicy, and the manager's answer to an
				// update it cannot judge.
				var d appsv1.Deployment
				r.get(t, "Deployment", "sluice", &d)
				if c := d.Spec.Template.Spec.Containers[0]; !slices.Contains(c.Args, "--workload-webhook-failure-policy=Fail") {
					t.Errorf("args %v lack --workload-webhook-failure-policy=Fail", c.Args)
				}
				var m admissionregistrationv1.MutatingWebhookConfiguration
				r.get(t, "MutatingWebhookConfiguration", "sluice", &m)
				for _, wh := range m.Webhooks {
					if wh.FailurePolicy == nil || *wh.FailurePolicy != admissionregistrationv1.Fail {
						t.Errorf("webhook %s failure policy %v, want Fail", wh.Name, wh.FailurePolicy)
					}
				}
			}},
		{name: "single-replica-url", want: map[string]int{"Deployment": 1, "Role": 1}, absent: []string{"PodDisruptionBudget"},
			checkFn: func(t *testing.T, r rendered) {
				var d appsv1.Deployment
				r.get(t, "Deployment", "sluice", &d)
				c := d.Spec.Template.Spec.Containers[0]
				for _, a := range []string{"--leader-elect=false", "--zap-log-level=debug", "--webhook-url=https://127.0.0.1:9443",
					"--workload-webhook-failure-policy=Fail"} {
					if !slices.Contains(c.Args, a) {
						t.Errorf("args %v lack %s", c.Args, a)
					}
				}
				if c.ImagePullPolicy != corev1.PullAlways {
					t.Errorf("pull policy %s, want Always", c.ImagePullPolicy)
				}
				var m admissionregistrationv1.MutatingWebhookConfiguration
				r.get(t, "MutatingWebhookConfiguration", "sluice", &m)
				if u := m.Webhooks[0].ClientConfig.URL; u == nil || *u != "https://127.0.0.1:9443/mutate-workload" {
					t.Errorf("workload webhook URL %v", u)
				}
				if p := m.Webhooks[0].FailurePolicy; p == nil || *p != admissionregistrationv1.Fail {
					t.Errorf("workload failure policy %v, want Fail", p)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, "sluice-system", valueSets[tt.name]...)
			got := r.kinds()
			for kind, n := range tt.want {
				if got[kind] != n {
					t.Errorf("%d %s objects, want %d (all: %v)", got[kind], kind, n, got)
				}
			}
			for _, kind := range tt.absent {
				if got[kind] != 0 {
					t.Errorf("%d %s objects, want none", got[kind], kind)
				}
			}
			if tt.checkFn != nil {
				tt.checkFn(t, r)
			}
		})
	}
}

func TestChart_deployment_hardenedAndHighlyAvailable(t *testing.T) {
	r := render(t, "sluice-system")
	var d appsv1.Deployment
	r.get(t, "Deployment", "sluice", &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != "sluice" {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil ||
		psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged == nil || *sc.Privileged ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v", c.Resources.Requests)
	}
	for _, a := range []string{"--leader-elect=true", "--leader-election-namespace=sluice-system",
		"--webhook-service=sluice-system/sluice-webhook", "--webhook-config-name=sluice", "--cert-dir=/etc/sluice/webhook-certs",
		"--workload-webhook-failure-policy=Ignore"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %v lack %s", c.Args, a)
		}
	}
	if c.LivenessProbe == nil || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %v readiness %v", c.LivenessProbe, c.ReadinessProbe)
	}
	var pdb policyv1.PodDisruptionBudget
	r.get(t, "PodDisruptionBudget", "sluice", &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 ||
		!equality.Semantic.DeepEqual(pdb.Spec.Selector, d.Spec.Selector) {
		t.Errorf("PodDisruptionBudget minAvailable %v selector %v: want 1 of the manager's pods", pdb.Spec.MinAvailable, pdb.Spec.Selector)
	}
}

// crdCount is how many CRDs config/crd/bases holds.
func crdCount(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(suite.root, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

func TestChart_crds_sameFilesAsConfig(t *testing.T) {
	want, _ := filepath.Glob(filepath.Join(suite.root, "config", "crd", "bases", "*.yaml"))
	got, _ := filepath.Glob(filepath.Join(chartDir(), "crds", "*.yaml"))
	base := func(fs []string) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = filepath.Base(f)
		}
		return out
	}
	if !slices.Equal(base(got), base(want)) || len(want) == 0 {
		t.Fatalf("charts/sluice/crds has %v, config/crd/bases has %v: run make manifests", base(got), base(want))
	}
	for i := range want {
		assertSameFile(t, got[i], want[i])
	}
}

func TestChart_rbac_sameRulesAsMarkers(t *testing.T) {
	generated := filepath.Join(suite.root, "config", "rbac", "role.yaml")
	assertSameFile(t, filepath.Join(chartDir(), "files", "role.yaml"), generated)
	b, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	var want rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatal(err)
	}
	var got rbacv1.ClusterRole
	render(t, "sluice-system").get(t, "ClusterRole", "sluice", &got)
	if len(want.Rules) == 0 || !equality.Semantic.DeepEqual(got.Rules, want.Rules) {
		t.Errorf("the chart's ClusterRole rules differ from config/rbac/role.yaml:\ngot  %v\nwant %v", got.Rules, want.Rules)
	}
}

func assertSameFile(t *testing.T, got, want string) {
	t.Helper()
	a, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from %s: run make manifests", got, want)
	}
}

func TestChart_webhooks_sameAsRegistration_withAWorkingCertificate(t *testing.T) {
	r := render(t, "sluice-system")
	// hack/webhookgen's options: the Service sluice-webhook in sluice-system.
	opts := registration.Options{Name: "sluice", ClientConfig: func(path string) admissionregistrationv1.WebhookClientConfig {
		p := path
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "sluice-system", Name: "sluice-webhook", Path: &p}}
	}}
	var m admissionregistrationv1.MutatingWebhookConfiguration
	r.get(t, "MutatingWebhookConfiguration", "sluice", &m)
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	r.get(t, "ValidatingWebhookConfiguration", "sluice", &v)
	var secret corev1.Secret
	r.get(t, "Secret", "sluice-webhook-cert", &secret)
	ca := secret.Data["ca.crt"]
	for i := range m.Webhooks {
		if !bytes.Equal(m.Webhooks[i].ClientConfig.CABundle, ca) {
			t.Errorf("webhook %s: caBundle is not the Secret's ca.crt", m.Webhooks[i].Name)
		}
		m.Webhooks[i].ClientConfig.CABundle = nil
	}
	for i := range v.Webhooks {
		if !bytes.Equal(v.Webhooks[i].ClientConfig.CABundle, ca) {
			t.Errorf("webhook %s: caBundle is not the Secret's ca.crt", v.Webhooks[i].Name)
		}
		v.Webhooks[i].ClientConfig.CABundle = nil
	}
	if want := registration.Mutating(opts).Webhooks; !equality.Semantic.DeepEqual(m.Webhooks, want) {
		t.Errorf("mutating webhooks differ from webhook/registration:\ngot  %+v\nwant %+v", m.Webhooks, want)
	}
	if want := registration.Validating(opts).Webhooks; !equality.Semantic.DeepEqual(v.Webhooks, want) {
		t.Errorf("validating webhooks differ from webhook/registration:\ngot  %+v\nwant %+v", v.Webhooks, want)
	}

	// The serving certificate is signed by the CA for the Service's name.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.crt holds no certificate")
	}
	block, _ := pem.Decode(secret.Data["tls.crt"])
	if block == nil {
		t.Fatal("tls.crt holds no certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "sluice-webhook.sluice-system.svc", Roots: pool}); err != nil {
		t.Errorf("the serving certificate does not verify for the Service: %v", err)
	}
}
