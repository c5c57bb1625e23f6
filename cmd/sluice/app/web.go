package app

import (
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluice-dev/sluice/web"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// WebOptions configure the rollout web view.
type WebOptions struct {
	// Addr is where the web view listens, e.g. ":8082"; "" or "0" turns
	// it off.
	Addr string
	// TokenFile, when set, holds the token every request must carry (as a
	// bearer token or the basic auth password); read once at start.
	TokenFile string
}

// addWebView adds the web view to mgr as a Runnable when it is turned on.
func addWebView(mgr ctrl.Manager, o Options) error {
	w := o.Web
	if w.Addr == "" || w.Addr == "0" {
		return nil
	}
	var auth web.Auth
	if w.TokenFile != "" {
		b, err := os.ReadFile(w.TokenFile)
		if err != nil {
			return fmt.Errorf("web view token: %w", err)
		}
		if auth.Token = strings.TrimSpace(string(b)); auth.Token == "" {
			return fmt.Errorf("web view token file %s is empty", w.TokenFile)
		}
	}
	return mgr.Add(&web.Server{
		Addr: w.Addr, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Workloads: kinds.New,
		Auth: auth, Logger: o.Logger.WithName("web"),
	})
}
