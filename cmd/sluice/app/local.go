package app

import (
	"context"
	"fmt"
	"os"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/webhook/localcert"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// localWebhooks registers the webhooks of a manager running as a local
// process once its webhook server listens, and removes them when it stops.
type localWebhooks struct {
	client  client.Client
	started healthz.Checker
	onReady func()
	certDir string
	opts    registration.Options
}

// prepareLocal makes the certificate, picks the port and completes o.
func prepareLocal(o *Options) (*localWebhooks, error) {
	dir, err := os.MkdirTemp("", "sluice-webhook-")
	if err != nil {
		return nil, err
	}
	caPEM, err := localcert.Generate(dir, 365*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("making the local webhook certificate: %w", err)
	}
	if o.WebhookPort == 0 {
		if o.WebhookPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	o.WebhookHost, o.CertDir = "127.0.0.1", dir
	if o.WebhookConfigName == "" {
		o.WebhookConfigName = "sluice-local"
	}
	policy, err := failurePolicy(o.WorkloadFailurePolicy)
	if err != nil {
		return nil, err
	}
	port := o.WebhookPort
	return &localWebhooks{certDir: dir, opts: registration.Options{
		Name:                  o.WebhookConfigName,
		WorkloadFailurePolicy: policy,
		ClientConfig: func(path string) admissionregistrationv1.WebhookClientConfig {
			url := fmt.Sprintf("https://127.0.0.1:%d%s", port, path)
			return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
		},
	}}, nil
}

// NeedLeaderElection is false: every replica serves webhooks.
func (l *localWebhooks) NeedLeaderElection() bool { return false }

// Start registers the webhooks, waits for ctx to end, then removes them.
func (l *localWebhooks) Start(ctx context.Context) error {
	logger := ctrl.LoggerFrom(ctx).WithName("local-webhooks")
	// Register only once the server answers, so the API server never calls
	// a webhook that is not there yet.
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return l.started(nil) == nil, nil
	}); err != nil {
		return nil //nolint:nilerr // stopped before the server started
	}
	objs := []client.Object{registration.Mutating(l.opts), registration.Validating(l.opts)}
	for _, obj := range objs {
		if err := l.client.Patch(ctx, obj, client.Apply, client.FieldOwner(rolloutsv1beta1.FieldManager), client.ForceOwnership); err != nil { //nolint:staticcheck // typed objects, apply patch is fine here
			return fmt.Errorf("registering webhook configuration %s: %w", obj.GetName(), err)
		}
	}
	err := enableConversion(ctx, l.client, registration.Conversion(l.opts))
	if err == nil {
		logger.Info("Registered local webhooks", "name", l.opts.Name)
		if l.onReady != nil {
			l.onReady()
		}
		<-ctx.Done()
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, obj := range objs {
		if err := client.IgnoreNotFound(l.client.Delete(cleanup, obj)); err != nil {
			logger.Error(err, "Removing webhook configuration", "name", obj.GetName())
		}
	}
	if ctx.Err() != nil {
		return nil // stopped
	}
	return err
}
