// Package gitopsgitea holds the GitOps user stories of sluice on a real
// Gitea (test/gitea, built from the module proxy by make gitea) with real
// Flux (test/flux) on the local control plane: Flux applies the branch
// from Gitea's own Git over HTTP, the GitGate names the repository in
// spec.scm with provider gitea, and the pull requests, labels and commit
// statuses are Gitea's.
package gitopsgitea

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/flux"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsstory"
)

// suite is what the stories share: one control plane, Flux, one Gitea and
// its people, one sluice.
//
//   - alice owns the organisation acme and merges; she may write;
//   - bob opens pull requests; he may write;
//   - carol may only read;
//   - dave reviews and approves releases; he may write;
//   - sluice-bot is the user whose token the GitGate names, with the
//     scopes docs/gitops-gitea.md asks for; it administers the repository
//     (Gitea shows other users' permissions only to administrators).
var suite struct {
	cfg                       *rest.Config
	c                         client.Client
	flux                      *flux.Flux
	gitea                     *giteatest.Server
	alice, bob, carol, sluice *giteatest.User
	dave                      *giteatest.User
	org                       *giteatest.Org
	stopManager               func()
	// hookURL is sluice's Gitea webhook endpoint.
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
		if err := startGitea(ctx); err != nil {
			return err
		}
		if suite.flux, err = flux.StartForTests(ctx, c.KubeconfigPath(), "sluice-gitopsgitea-flux-"); err != nil {
			return err
		}
		stage = gitopsstory.Stage{C: suite.c, Flux: suite.flux}
		return startManager(ctx)
	})
	if suite.stopManager != nil {
		suite.stopManager()
	}
	code = suite.flux.Finish(code)
	if suite.gitea != nil {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "gitopsgitea: Gitea's log: %s\n", suite.gitea.LogPath())
		}
		if err := suite.gitea.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// startGitea starts Gitea (its build fails the suite with the command that
// makes it) and creates its people.
func startGitea(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var log io.Writer
	if testing.Verbose() {
		log = os.Stderr
	}
	s, err := giteatest.Start(ctx, giteatest.Options{Log: log})
	if err != nil {
		return err
	}
	suite.gitea = s
	for _, u := range []struct {
		to     **giteatest.User
		login  string
		scopes []string
	}{
		{&suite.alice, "alice", nil}, {&suite.bob, "bob", nil}, {&suite.carol, "carol", nil}, {&suite.dave, "dave", nil},
		{&suite.sluice, "sluice-bot", []string{"write:repository", "write:issue", "read:organization", "read:user"}},
	} {
		if *u.to, err = s.CreateUser(ctx, u.login, u.scopes...); err != nil {
			return err
		}
	}
	suite.org, err = s.CreateOrg(ctx, suite.alice, "acme")
	return err
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
	suite.hookURL = "http://" + hookAddr + app.GiteaWebhookPath
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-gitopsgitea-e2e",
		GitAllowInsecureHTTP: true, GitHubWebhookAddr: hookAddr})
	if err != nil {
		return err
	}
	suite.stopManager = func() { _ = m.Stop() }
	return nil
}

// collaborators gives bob and dave write and carol read access to repo, and
// makes sluice-bot its administrator.
func collaborators(ctx context.Context, repo *giteatest.Repo) error {
	for _, c := range []struct {
		u    *giteatest.User
		mode sdk.AccessMode
	}{{suite.bob, sdk.AccessModeWrite}, {suite.dave, sdk.AccessModeWrite}, {suite.carol, sdk.AccessModeRead}, {suite.sluice, sdk.AccessModeAdmin}} {
		if err := repo.AddCollaborator(ctx, suite.alice, c.u, c.mode); err != nil {
			return err
		}
	}
	return nil
}
