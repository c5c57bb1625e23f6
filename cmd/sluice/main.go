// Command sluice is the sluice manager: the Rollout and BatchRelease
// controllers and their admission webhooks.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/config"
)

func main() {
	var o app.Options
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 disables it.")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 disables them.")
	flag.StringVar(&o.GitHubWebhookAddr, "github-webhook-bind-address", "0", "Address of the webhook endpoints of GitGates ("+app.GitHubWebhookPath+", "+app.GiteaWebhookPath+", "+app.GitLabWebhookPath+"); 0 disables them.")
	flag.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader among replicas; only the leader runs controllers.")
	flag.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a lost leader's lease blocks the other replicas; renew deadline and retry period follow it.")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	flag.BoolVar(&o.Local, "local", false, "Run outside the cluster: make a webhook certificate and register the webhooks with URLs on 127.0.0.1.")
	flag.IntVar(&o.WebhookPort, "webhook-port", 9443, "Port of the admission webhooks (0 with --local picks a free one).")
	flag.StringVar(&o.CertDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Directory with tls.crt and tls.key for the webhooks (ignored with --local).")
	flag.StringVar(&o.WebhookConfigName, "webhook-config-name", "sluice-local", "Name of the webhook configurations registered with --local, or installed by the Helm chart.")
	flag.StringVar(&o.WebhookService, "webhook-service", "", "In a cluster: namespace/name of the webhook Service; sluice points the Rollout CRD's conversion at it (CA from --cert-dir/ca.crt) and keeps the workload webhook's rules in --webhook-config-name up to date (the Helm chart sets it).")
	flag.StringVar(&o.WebhookURL, "webhook-url", "", "Like --webhook-service, with the base URL the API server reaches the webhooks at (a manager run outside the cluster with the chart's certificate).")
	flag.StringVar(&o.WorkloadFailurePolicy, "workload-webhook-failure-policy", "Ignore", "Failure policy of the workload webhook: Ignore lets workload updates through unheld when sluice is down or cannot judge them (with a warning), Fail refuses them. With --local the webhook is registered with it; installed, give the policy of the chart's webhook configuration (the Helm chart does).")
	flag.IntVar(&o.RolloutWorkers, "rollout-workers", app.DefaultWorkers, "How many Rollouts are reconciled at once.")
	flag.IntVar(&o.BatchReleaseWorkers, "batchrelease-workers", app.DefaultWorkers, "How many BatchReleases are reconciled at once.")
	flag.DurationVar(&o.ProgressDeadline, "progress-deadline", 10*time.Minute, "How long a step may take to get its pods ready before a Rollout reports Stalled (Rollouts override it with sluice.dev/progress-deadline); 0 waits forever.")
	flag.BoolVar(&o.KeepHeldOnDeletion, "keep-workload-held-on-deletion", false, "Leave a workload held (paused) when its Rollout is deleted mid-release (Rollouts override it with sluice.dev/keep-workload-held-on-deletion).")
	flag.StringVar(&o.Web.Addr, "web-bind-address", "0", "Address of the read-only rollout web view, e.g. :8082; 0 disables it.")
	flag.StringVar(&o.Web.TokenFile, "web-token-file", "", "File holding the token the web view asks for (bearer token or basic auth password); empty: no authentication.")
	flag.BoolVar(&o.GitAllowInsecureHTTP, "git-allow-insecure-http", false, "Let GitGates read Git repositories over plain HTTP. For tests only: anyone on the way could forge approvals.")
	installCRDs := flag.Bool("install-crds", false, "Apply sluice's CRDs before starting (make run uses it).")
	asUser := flag.String("as", "", "Act as this user (impersonation). sluice lets its own writes through its hold and knows them by the user it authenticates as, so a manager run with a person's credentials (make run) must act as a user of its own.")
	var asGroups stringList
	flag.Var(&asGroups, "as-group", "A group to act as with --as (repeatable), e.g. system:masters on a local control plane.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	o.Logger = zap.New(zap.UseFlagOptions(&zapOpts))
	if limit, err := app.SetMemoryLimit(); err != nil {
		o.Logger.Error(err, "Not setting the Go memory limit from the container's")
	} else if limit > 0 {
		o.Logger.Info("Go memory limit set to 90% of the container's", "bytes", limit)
	}
	if o.Local && o.WebhookPort == 9443 {
		o.WebhookPort = 0
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sluice: no Kubernetes configuration: %v (set KUBECONFIG or use --kubeconfig)\n", err)
		os.Exit(1)
	}
	if *asUser != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: *asUser, Groups: asGroups}
	}
	ctx := ctrl.SetupSignalHandler()
	if *installCRDs {
		if err := config.InstallCRDs(ctx, cfg, "sluice"); err != nil {
			fmt.Fprintf(os.Stderr, "sluice: installing CRDs: %v\n", err)
			os.Exit(1)
		}
	}
	if err := app.Run(ctx, cfg, o); err != nil {
		fmt.Fprintf(os.Stderr, "sluice: %v\n", err)
		os.Exit(1)
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
