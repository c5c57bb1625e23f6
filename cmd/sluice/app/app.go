// Package app wires the sluice manager: the Rollout and BatchRelease
// controllers, the admission webhooks, metrics and health endpoints. The
// sluice command runs it; tests and benchmarks run it in-process.
package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sluice-dev/sluice/analysis/condition"
	"github.com/sluice-dev/sluice/analysis/providers"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	analysiscontroller "github.com/sluice-dev/sluice/controllers/analysis"
	"github.com/sluice-dev/sluice/controllers/batchrelease"
	gitopscontroller "github.com/sluice-dev/sluice/controllers/gitops"
	notificationcontroller "github.com/sluice-dev/sluice/controllers/notification"
	"github.com/sluice-dev/sluice/controllers/rollout"
	"github.com/sluice-dev/sluice/controllers/trafficrouting"
	"github.com/sluice-dev/sluice/controllers/webhookrules"
	"github.com/sluice-dev/sluice/notification/sinks"
	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/traffic/lua"
	"github.com/sluice-dev/sluice/webhook/conversion"
	metricgatewebhook "github.com/sluice-dev/sluice/webhook/metricgate"
	rolloutwebhook "github.com/sluice-dev/sluice/webhook/rollout"
	workloadwebhook "github.com/sluice-dev/sluice/webhook/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// Options configure the manager.
type Options struct {
	// MetricsAddr serves Prometheus metrics ("0" disables).
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz ("0" disables).
	ProbeAddr string
	// LeaderElect turns on leader election; LeaderElectionNamespace is
	// where its Lease lives (defaults to the in-cluster namespace).
	LeaderElect             bool
	LeaderElectionNamespace string
	// LeaseDuration is how long a lost leader's lease blocks the others
	// (default 15s); RenewDeadline and RetryPeriod follow it (2/3 and 1/5
	// of it).
	LeaseDuration time.Duration
	// Local runs the manager as a process outside the cluster: it makes its
	// own webhook certificate and registers its webhooks with URLs on
	// 127.0.0.1, removing them again when it stops.
	Local bool
	// WebhookHost and WebhookPort are where the webhooks listen (port 0 in
	// local mode picks a free one).
	WebhookHost string
	WebhookPort int
	// CertDir holds tls.crt and tls.key (in a cluster, the mounted secret).
	CertDir string
	// WebhookConfigName names the webhook configurations registered in
	// local mode, or installed by the Helm chart.
	WebhookConfigName string
	// WebhookService ("namespace/name") or WebhookURL (a base URL) say,
	// outside local mode, how the API server reaches the webhooks of an
	// installed manager: the manager then points the Rollout CRD's
	// conversion there (CA from CertDir/ca.crt) and keeps the workload
	// webhook's rules in WebhookConfigName in line with custom kinds.
	WebhookService, WebhookURL string
	// WorkloadFailurePolicy is the failure policy of the workload webhook,
	// Ignore (the default) or Fail: what the API server does when it
	// cannot reach the webhook, and what the webhook does with an update
	// it cannot judge (an internal error). A local manager registers its
	// webhook with it; an installed one must be given the policy its
	// configuration has (the Helm chart passes webhook.workloadFailurePolicy).
	WorkloadFailurePolicy string
	// WrapTransport, when set, wraps the transport of every API client
	// (benchmarks count requests with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// ProgressDeadline is how long a step may take to get its pods ready
	// before a Rollout reports Stalled (Rollouts may override it); 0 waits
	// forever.
	ProgressDeadline time.Duration
	// KeepHeldOnDeletion keeps workloads held when their Rollout is deleted
	// mid-release (Rollouts may override it).
	KeepHeldOnDeletion bool
	// RolloutWorkers and BatchReleaseWorkers are how many Rollouts and
	// BatchReleases are reconciled at once (default DefaultWorkers each).
	RolloutWorkers, BatchReleaseWorkers int
	// InProcessRestarts allows running the manager more than once in one
	// process (tests stop and restart sluice); it skips controller-runtime's
	// check that controller names, and so their metrics, are unique.
	InProcessRestarts bool
	// OnReady, when set, is called in local mode once the webhooks are
	// registered and served.
	OnReady func()
	// Logger is the root logger.
	Logger logr.Logger
	// Web configures the rollout web view (off unless Web.Addr is set).
	Web WebOptions
	// GitAllowInsecureHTTP lets GitGates read Git repositories over plain
	// HTTP (tests only: anyone on the way could forge approvals).
	GitAllowInsecureHTTP bool
	// GitHubWebhookAddr serves the GitHub webhook endpoint (path
	// /hook/github) for GitGates; empty or "0" disables it (GitGates then
	// only poll).
	GitHubWebhookAddr string
	// Namespace is the manager's own namespace, where it reads the Lua
	// scripts of custom traffic routes (ConfigMap
	// kruise-rollout-configuration); default: $POD_NAMESPACE, else
	// sluice-system.
	Namespace string
}

// Scheme returns the scheme with every kind sluice reads or writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := rolloutsv1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := rolloutsv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := gitopsv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := analysisv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := notificationv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Run runs the manager until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	cfg = rest.CopyConfig(cfg)
	if o.WrapTransport != nil {
		cfg.Wrap(o.WrapTransport)
	}
	ctrl.SetLogger(o.Logger)
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	var local *localWebhooks
	if o.Local {
		if local, err = prepareLocal(&o); err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(local.certDir) }()
	}
	lease := o.LeaseDuration
	if lease <= 0 {
		lease = 15 * time.Second
	}
	renew, retry := lease*2/3, lease/5
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  o.Logger,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "sluice.rollouts.kruise.io",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           &lease,
		RenewDeadline:           &renew,
		RetryPeriod:             &retry,
		WebhookServer:           webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.CertDir}),
		Controller:              config.Controller{SkipNameValidation: &o.InProcessRestarts},
		Cache:                   cacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := setup(ctx, mgr, o); err != nil {
		return err
	}
	if local != nil {
		local.client = mgr.GetClient()
		local.started = mgr.GetWebhookServer().StartedChecker()
		local.onReady = o.OnReady
		if err := mgr.Add(local); err != nil {
			return err
		}
		// The workload webhook follows the custom kinds Rollouts name.
		if err := (&webhookrules.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			ConfigName: o.WebhookConfigName}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the webhook rules controller: %w", err)
		}
	}
	if err := setupInstalled(mgr, o); err != nil {
		return err
	}
	if err := addWebView(mgr, o); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// namespaceOf is the manager's namespace o names, else $POD_NAMESPACE,
// else lua.DefaultNamespace.
func namespaceOf(o Options) string {
	for _, ns := range []string{o.Namespace, os.Getenv("POD_NAMESPACE")} {
		if ns != "" {
			return ns
		}
	}
	return lua.DefaultNamespace
}

// setup registers the controllers and webhooks with mgr.
func setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	recorder := mgr.GetEventRecorder("sluice")
	clk := clock.RealClock{}
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	rw := newReads(mgr, m)
	if err := mgr.Add(rw.guard); err != nil {
		return err
	}
	if err := (&rollout.Reconciler{
		Client: rw.client, APIReader: rw.reader, Recorder: recorder, Clock: clk, Workloads: kinds.New,
		Metrics: m.Rollouts(recorder, clk),
		Workers: orDefault(o.RolloutWorkers, DefaultWorkers), ProgressDeadline: o.ProgressDeadline, KeepHeldOnDeletion: o.KeepHeldOnDeletion,
		Namespace: namespaceOf(o),
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the rollout controller: %w", err)
	}
	if err := (&batchrelease.Reconciler{
		Client: rw.client, APIReader: rw.reader, Recorder: recorder, Clock: clk, Workloads: kinds.New,
		Workers: orDefault(o.BatchReleaseWorkers, DefaultWorkers),
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the batchrelease controller: %w", err)
	}
	if err := (&trafficrouting.Reconciler{
		Client: rw.client, APIReader: mgr.GetAPIReader(), Recorder: recorder, Workers: orDefault(o.RolloutWorkers, DefaultWorkers),
		Namespace: namespaceOf(o),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the trafficrouting controller: %w", err)
	}
	decoder := admission.NewDecoder(mgr.GetScheme())
	srv := mgr.GetWebhookServer()
	self, err := selfUser(ctx, mgr.GetConfig())
	if err != nil {
		return err
	}
	policy, err := failurePolicy(o.WorkloadFailurePolicy)
	if err != nil {
		return err
	}
	srv.Register(workloadwebhook.Path, &webhook.Admission{Handler: &workloadwebhook.Handler{
		Client: mgr.GetClient(), Holds: kinds.HoldFor, Self: self, FailurePolicy: policy, Errors: m}})
	srv.Register(rolloutwebhook.ValidatePath, &webhook.Admission{Handler: &rolloutwebhook.Validator{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Decoder: decoder}})
	conditions, err := condition.New()
	if err != nil {
		return err
	}
	srv.Register(metricgatewebhook.Path, &webhook.Admission{Handler: &metricgatewebhook.Validator{
		Decoder: decoder, Conditions: conditions}})
	srv.Register(rolloutwebhook.MutatePath, &webhook.Admission{Handler: &rolloutwebhook.Mutator{
		Decoder: decoder, Clock: clk, Delegates: []string{self}}})
	if err := (&analysiscontroller.Reconciler{
		Client: rw.client, APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: clk, Conditions: conditions,
		Providers: providers.New(providers.Deps{Client: mgr.GetClient(), Secrets: secretReader(mgr.GetAPIReader()), Clock: clk}),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the metricgate controller: %w", err)
	}
	if err := (&notificationcontroller.Reconciler{
		Client: rw.client, APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: clk,
		Sinks: sinks.Deps{Secrets: secretReader(mgr.GetAPIReader())},
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the notifier controller: %w", err)
	}
	gates := &gitopscontroller.Reconciler{Client: rw.client, APIReader: mgr.GetAPIReader(), Recorder: recorder,
		Clock: clk, AllowInsecureHTTP: o.GitAllowInsecureHTTP, SCMObserver: m}
	if err := gates.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the gitgate controller: %w", err)
	}
	if err := serveGitHubWebhook(mgr, o.GitHubWebhookAddr, gates, m); err != nil {
		return err
	}
	return conversion.Setup(mgr)
}

// DefaultWorkers is how many Rollouts, and how many BatchReleases, are
// reconciled at once unless Options say otherwise. A reconcile mostly waits
// on the API server; with three workers an approval of 100 Rollouts at once
// queued behind the others' round trips.
const DefaultWorkers = 10

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return strconv.Atoi(port)
}

// failurePolicy parses a failure policy name, defaulting to Ignore.
func failurePolicy(s string) (admissionregistrationv1.FailurePolicyType, error) {
	switch s {
	case "", string(admissionregistrationv1.Ignore):
		return admissionregistrationv1.Ignore, nil
	case string(admissionregistrationv1.Fail):
		return admissionregistrationv1.Fail, nil
	}
	return "", fmt.Errorf("--workload-webhook-failure-policy %q: use Ignore or Fail", s)
}
