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
)

// GitHubWebhookPath is where the GitHub webhook endpoint is served.
const GitHubWebhookPath = "/hook/github"

// serveGitHubWebhook serves the GitHub webhook receiver on addr, handing
// deliveries to the GitGate controller. It runs on every replica; only the
// leader's hints reach a running controller, the others are dropped and the
// poll covers them.
func serveGitHubWebhook(mgr ctrl.Manager, addr string, gates *gitopscontroller.Reconciler, m receiver.Metrics) error {
	if addr == "" || addr == "0" {
		return nil
	}
	h, err := receiver.New(receiver.Options{Trigger: hints{gates}, Secrets: gates, Metrics: m})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(GitHubWebhookPath, h)
	// ReadTimeout bounds a slow body (deliveries are capped at 25 MiB).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context {
			return ctrl.LoggerInto(context.Background(), mgr.GetLogger().WithName("github-webhook"))
		}}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening for GitHub webhooks on %s: %w", addr, err)
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

// hints hands the receiver's events to the GitGate controller as hints.
type hints struct{ gates *gitopscontroller.Reconciler }

var _ receiver.Trigger = hints{}

// Trigger implements receiver.Trigger.
func (h hints) Trigger(ctx context.Context, e receiver.Event) { h.gates.Hint(ctx, e.Repository) }
