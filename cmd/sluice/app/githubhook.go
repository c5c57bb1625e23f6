package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	gitopscontroller "github.com/sluice-dev/sluice/controllers/gitops"
	"github.com/sluice-dev/sluice/gitops/receiver"
	giteahook "github.com/sluice-dev/sluice/gitops/scm/gitea/webhook"
	gitlabhook "github.com/sluice-dev/sluice/gitops/scm/gitlab/webhook"
)

// The paths of the webhook endpoints, one per SCM host, all served on the
// one address of Options.GitHubWebhookAddr.
const (
	// GitHubWebhookPath receives GitHub's deliveries (X-Hub-Signature-256).
	GitHubWebhookPath = "/hook/github"
	// GiteaWebhookPath receives Gitea's and Forgejo's deliveries
	// (X-Gitea-Signature / X-Forgejo-Signature).
	GiteaWebhookPath = "/hook/gitea"
	// GitLabWebhookPath receives GitLab's deliveries (X-Gitlab-Token).
	GitLabWebhookPath = "/hook/gitlab"
)

// serveGitHubWebhook serves the webhook receivers of GitHub, Gitea and
// GitLab on addr, handing deliveries to the GitGate controller. It runs on
// every replica, leader or not (a Runnable that needs no leader election):
// the hint of a delivery is written on the GitGates through the API, so the
// leader acts on it within the watch's latency whichever replica the host
// reached.
func serveGitHubWebhook(mgr ctrl.Manager, addr string, gates *gitopscontroller.Reconciler, m receiver.Metrics) error {
	if addr == "" || addr == "0" {
		return nil
	}
	h, err := receiver.New(receiver.Options{Trigger: hints{gates}, Secrets: secretList{gates}, Metrics: m})
	if err != nil {
		return err
	}
	// The Gitea and GitLab receivers find the secrets by repository, which
	// the GitGate controller indexes.
	gitea, err := giteahook.New(giteahook.Options{Trigger: hints{gates}, Secrets: gates, Metrics: m})
	if err != nil {
		return err
	}
	gitlab, err := gitlabhook.New(gitlabhook.Options{Trigger: hints{gates}, Secrets: gates, Metrics: m})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(GitHubWebhookPath, h)
	mux.Handle(GiteaWebhookPath, gitea)
	mux.Handle(GitLabWebhookPath, gitlab)
	return mgr.Add(everyReplica(func(ctx context.Context) error {
		// Requests run in the runnable's context: the manager's stop reaches a delivery in
		// flight (it is answered 503, and GitHub's redelivery counts).
		reqCtx := ctrl.LoggerInto(ctx, mgr.GetLogger().WithName("webhook-receiver"))
		// ReadTimeout bounds a slow body (deliveries are capped at 25 MiB).
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
			BaseContext: func(net.Listener) context.Context { return reqCtx }}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening for webhooks on %s: %w", addr, err)
		}
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}))
}

// everyReplica is a Runnable that runs on every replica, not only the
// leader.
type everyReplica func(ctx context.Context) error

var _ manager.LeaderElectionRunnable = everyReplica(nil)

// Start implements manager.Runnable.
func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (everyReplica) NeedLeaderElection() bool { return false }

// hints hands the receiver's events to the GitGate controller as hints.
type hints struct{ gates *gitopscontroller.Reconciler }

var (
	_ receiver.Trigger         = hints{}
	_ receiver.FallibleTrigger = hints{}
)

// Trigger implements receiver.Trigger; the receiver calls TryTrigger.
func (h hints) Trigger(ctx context.Context, e receiver.Event) { _ = h.TryTrigger(ctx, e) }

// TryTrigger implements receiver.FallibleTrigger: a press of a check
// run's button is recorded on the GitGates it concerns (which wakes them);
// any other event is a hint to read the repository again.
func (h hints) TryTrigger(ctx context.Context, e receiver.Event) error {
	if e.Kind == receiver.KindCheckRun {
		return h.gates.RecordPress(ctx, e)
	}
	return h.gates.Hint(ctx, e.Repository)
}

// secretList hands the GitGates' webhook secrets to the receiver.
type secretList struct{ gates *gitopscontroller.Reconciler }

var _ receiver.SecretList = secretList{}

// WebhookSecrets implements receiver.SecretList.
func (s secretList) WebhookSecrets(ctx context.Context, refresh bool) ([]receiver.Secret, error) {
	list, err := s.gates.WebhookSecrets(ctx, refresh)
	if err != nil {
		return nil, err
	}
	out := make([]receiver.Secret, 0, len(list))
	for _, w := range list {
		out = append(out, receiver.Secret{Value: w.Value, Repositories: []string{w.Repository}})
	}
	return out, nil
}
