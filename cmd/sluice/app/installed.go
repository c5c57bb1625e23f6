package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/sluice-dev/sluice/controllers/webhookrules"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// CAFile is the CA certificate beside tls.crt and tls.key in the webhook
// certificate directory of an installed manager: cert-manager and the Helm
// chart both write it into the webhook Secret.
const CAFile = "ca.crt"

// caRecheck is how often an installed manager sets the conversion again with
// the CA it reads: cert-manager renews certificates in place (a self-signed
// one is its own CA), and a CRD applied again may have lost the conversion.
const caRecheck = 30 * time.Second

// installedConversion points the Rollout CRD's conversion at the webhook of
// a manager installed by the Helm chart, once its webhook server serves, and
// again every caRecheck with the CA in the certificate directory. The chart
// cannot template the CRD (Helm installs crds/ verbatim), so the manager
// sets the conversion, as a local manager does.
type installedConversion struct {
	client  client.Client
	started healthz.Checker
	// caFile holds the CA; clientConfig says how to reach path with ca.
	caFile       string
	clientConfig func(path string, ca []byte) admissionregistrationv1.WebhookClientConfig
}

// prepareInstalled returns the runnable that sets the Rollout CRD's
// conversion when o names the webhook's Service or URL, nil otherwise.
func prepareInstalled(o Options) (*installedConversion, error) {
	if o.WebhookService == "" && o.WebhookURL == "" {
		return nil, nil //nolint:nilnil // nothing to do: no webhook address given
	}
	if o.WebhookService != "" && o.WebhookURL != "" {
		return nil, fmt.Errorf("--webhook-service and --webhook-url are exclusive")
	}
	c := &installedConversion{caFile: filepath.Join(o.CertDir, CAFile)}
	if _, err := os.Stat(c.caFile); err != nil {
		return nil, fmt.Errorf("reading the webhook CA: %w", err)
	}
	c.clientConfig = func(path string, ca []byte) admissionregistrationv1.WebhookClientConfig {
		url := strings.TrimSuffix(o.WebhookURL, "/") + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca}
	}
	if o.WebhookService != "" {
		ns, name, ok := strings.Cut(o.WebhookService, "/")
		if !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("--webhook-service %q: use namespace/name", o.WebhookService)
		}
		c.clientConfig = func(path string, ca []byte) admissionregistrationv1.WebhookClientConfig {
			p := path
			return admissionregistrationv1.WebhookClientConfig{CABundle: ca,
				Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: name, Path: &p}}
		}
	}
	return c, nil
}

// conversion returns the Rollout CRD's conversion with the CA ca.
func (c *installedConversion) conversion(ca []byte) *apiextensionsv1.CustomResourceConversion {
	return registration.Conversion(registration.Options{ClientConfig: func(path string) admissionregistrationv1.WebhookClientConfig {
		return c.clientConfig(path, ca)
	}})
}

// NeedLeaderElection is false: every replica serves the webhook, and the
// patch is the same from each.
func (c *installedConversion) NeedLeaderElection() bool { return false }

// Start waits for the webhook server, then sets the conversion, and sets it
// again when the CA changes.
func (c *installedConversion) Start(ctx context.Context) error {
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.started(nil) == nil, nil
	}); err != nil {
		return nil //nolint:nilerr // stopped before the server started
	}
	logger := ctrl.LoggerFrom(ctx).WithName("conversion")
	var set []byte
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		ca, err := os.ReadFile(c.caFile)
		if err != nil {
			logger.Error(err, "Reading the webhook CA")
			return
		}
		// Patch every time: a no-op for the API server when nothing
		// changed, and a repair when the CRD was replaced without it.
		if err := patchConversion(ctx, c.client, c.conversion(ca)); err != nil {
			logger.Error(err, "Setting the conversion webhook of the Rollout and BatchRelease CRDs")
			return
		}
		if !bytes.Equal(ca, set) {
			set = ca
			logger.Info("Set the conversion webhook of the Rollout and BatchRelease CRDs", "crds", registration.ConvertedCRDs)
		}
	}, caRecheck)
	return nil
}

// setupInstalled adds, outside local mode and when o names the webhook's
// address, the conversion runnable and the webhook rules controller.
func setupInstalled(mgr ctrl.Manager, o Options) error {
	if o.Local {
		return nil
	}
	conv, err := prepareInstalled(o)
	if err != nil || conv == nil {
		return err
	}
	conv.client, conv.started = mgr.GetClient(), mgr.GetWebhookServer().StartedChecker()
	if err := mgr.Add(conv); err != nil {
		return err
	}
	if err := (&webhookrules.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		ConfigName: o.WebhookConfigName}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the webhook rules controller: %w", err)
	}
	return nil
}
