// Package gitopsgitlab holds the GitOps user stories of sluice on GitLab,
// with real Flux (test/flux) on the local control plane.
//
// GitLab itself cannot run here (docs/gitops-gitlab.md says why), so its
// host is the fake GitLab, test/gitlabfake: every request sluice sends it
// and every answer it gives decodes through the types of
// gitlab.com/gitlab-org/api/client-go (a mismatch fails the story), and its
// commit statuses follow GitLab's state machine (running→running and
// pending→pending are refused; success and failed come from pending or
// running). Git is the local Git
// server (test/gitserver), which Flux applies from and sluice reads; every
// push to it is mirrored on the fake under the same SHAs, with its files
// (test/gitopsworld's GitLabProject), so that merge requests, statuses and
// reverts on GitLab name the commits Flux applies. The GitGate names the
// project in spec.scm with provider gitlab.
package gitopsgitlab

import (
	"context"
	"net"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/poll"
)

// suite is what the stories share: one control plane, Flux, one Git server
// and one sluice. Each story has its own fake GitLab.
var suite struct {
	cfg         *rest.Config
	c           client.Client
	git         *gitserver.Server
	flux        *flux.Flux
	stopManager func()
	// hookURL is sluice's GitLab webhook endpoint.
	hookURL string
}

// stage is what the stories check on the cluster (test/gitopsstory).
var stage gitopsstory.Stage

func TestMain(m *testing.M) {
	code := cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		ctx := context.Background()
		suite.cfg = c.RESTConfig()
		if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
			return err
		}
		scheme, err := app.Scheme()
		if err != nil {
			return err
		}
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
		if suite.git, err = gitserver.Start(gitserver.Options{}); err != nil {
			return err
		}
		if suite.flux, err = flux.StartForTests(ctx, c.KubeconfigPath(), "sluice-gitopsgitlab-flux-"); err != nil {
			return err
		}
		stage = gitopsstory.Stage{C: suite.c, Flux: suite.flux}
		return startManager(ctx)
	})
	if suite.stopManager != nil {
		suite.stopManager()
	}
	if suite.git != nil {
		_ = suite.git.Close()
	}
	os.Exit(suite.flux.Finish(code))
}

// startManager runs sluice in-process (env.StartManager), allowed to read
// Git over plain HTTP, with its webhook receivers on a free port.
func startManager(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hookAddr := l.Addr().String()
	_ = l.Close()
	suite.hookURL = "http://" + hookAddr + app.GitLabWebhookPath
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-gitopsgitlab-e2e", Logger: poll.Logger(),
		GitAllowInsecureHTTP: true, GitHubWebhookAddr: hookAddr})
	if err != nil {
		return err
	}
	suite.stopManager = func() { _ = m.Stop() }
	return nil
}
