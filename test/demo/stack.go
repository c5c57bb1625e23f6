package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// stack is everything the demo starts; stop ends exactly that, newest
// first.
type stack struct {
	out  io.Writer
	dir  string
	logs *logFiles

	cluster *cluster.Cluster
	flux    *flux.Flux
	git     *gitserver.Server
	github  *githubfake.Server
	manager *env.Manager
	// hookURL is sluice's GitHub webhook receiver, when it runs.
	hookURL string
}

// progress returns a writer that indents each line it gets under the
// demo's own lines.
func (s *stack) progress(prefix string) io.Writer {
	return &linePrefixer{w: s.out, prefix: prefix}
}

// clusterBinaries finds (on the first run: builds) the control-plane
// binaries.
func (s *stack) clusterBinaries(ctx context.Context) (string, error) {
	fmt.Fprintln(s.out, "Finding the control-plane binaries; the first run builds Kubernetes from source (6-10 minutes on 2 cores, more on a busy machine)")
	return cluster.Binaries(ctx, s.progress("  build: "))
}

// startCluster starts the control plane in dir/cluster and installs
// sluice's CRDs.
func (s *stack) startCluster(ctx context.Context, bin string) error {
	dir := filepath.Join(s.dir, "cluster")
	fmt.Fprintf(s.out, "Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok in %s\n", dir)
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, BinDir: bin, Log: s.progress("  ")})
	if err != nil {
		return fmt.Errorf("starting the local control plane: %w", err)
	}
	s.cluster = c
	if err := env.InstallCRDs(ctx, c.RESTConfig()); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	return nil
}

// buildFlux finds (on the first run: builds) Flux's two controllers.
func (s *stack) buildFlux(ctx context.Context) (string, error) {
	fmt.Fprintln(s.out, "Finding Flux's source-controller and kustomize-controller; the first run builds them from source (5-20 minutes, depending on the machine's load)")
	return flux.Build(ctx, s.progress("  build: "))
}

// startFlux starts Flux's controllers against the control plane, their
// state and logs in dir/flux.
func (s *stack) startFlux(ctx context.Context, bin string) error {
	dir := filepath.Join(s.dir, "flux")
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing Flux's state of the last run: %w", err)
	}
	fmt.Fprintf(s.out, "Starting Flux's source-controller and kustomize-controller in %s\n", dir)
	f, err := flux.Start(ctx, flux.Options{Kubeconfig: s.cluster.KubeconfigPath(), Dir: dir, BinDir: bin, Log: s.progress("  ")})
	if err != nil {
		return fmt.Errorf("starting Flux: %w", err)
	}
	s.flux = f
	return nil
}

// startGitHub starts the Git server and the GitHub stand-in.
func (s *stack) startGitHub() error {
	git, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		return fmt.Errorf("starting the Git server: %w", err)
	}
	s.git = git
	gh, err := githubfake.New(s.logs.reporter)
	if err != nil {
		return fmt.Errorf("starting the GitHub stand-in: %w", err)
	}
	s.github = gh
	return nil
}

// startManager runs sluice's manager in-process, its log in sluice.log;
// with hook, also its GitHub webhook receiver on a free loopback port.
func (s *stack) startManager(ctx context.Context, hook bool) error {
	o := env.ManagerOptions{Name: "sluice-demo", Logger: s.logs.logger}
	if hook {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		o.GitHubWebhookAddr, o.GitAllowInsecureHTTP = addr, true
		s.hookURL = "http://" + addr + app.GitHubWebhookPath
	}
	fmt.Fprintf(s.out, "Starting sluice in-process (its log: %s)\n", s.logs.path("sluice.log"))
	m, err := env.StartManager(ctx, s.cluster.RESTConfig(), o)
	if err != nil {
		return err
	}
	s.manager = m
	return nil
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// stop stops what was started, newest first, saying so.
func (s *stack) stop() error {
	var errs []error
	if s.manager != nil {
		fmt.Fprintln(s.out, "Stopping sluice")
		errs = append(errs, s.manager.Stop())
	}
	if s.flux != nil {
		fmt.Fprintln(s.out, "Stopping Flux")
		errs = append(errs, s.flux.Stop())
	}
	if s.github != nil {
		s.github.Close()
	}
	if s.git != nil {
		fmt.Fprintln(s.out, "Stopping the Git server and the GitHub stand-in")
		errs = append(errs, s.git.Close())
	}
	if s.cluster != nil {
		fmt.Fprintln(s.out, "Stopping the local control plane")
		errs = append(errs, s.cluster.Stop())
	}
	return errors.Join(errs...)
}

// printLogs names the log files of what ran.
func (s *stack) printLogs() {
	fmt.Fprintf(s.out, "Logs: sluice %s", s.logs.path("sluice.log"))
	if s.cluster != nil {
		fmt.Fprintf(s.out, ", control plane %s", filepath.Join(s.dir, "cluster", "logs"))
	}
	if s.flux != nil {
		fmt.Fprintf(s.out, ", Flux %s", filepath.Join(s.dir, "flux", "logs"))
	}
	if s.git != nil {
		fmt.Fprintf(s.out, ", Git server %s, GitHub stand-in %s", s.logs.path("git-server.log"), s.logs.path("github.log"))
	}
	fmt.Fprintln(s.out)
}

// processFailed reports a Flux controller that died, or nil.
func (s *stack) processFailed() error {
	if s.flux != nil {
		if err := s.flux.Failed(); err != nil {
			return fmt.Errorf("a Flux controller stopped: %w", err)
		}
	}
	return nil
}

// failed reports the first thing the demo started that died, or a request
// the GitHub stand-in refused, or nil.
func (s *stack) failed() error {
	if err := s.processFailed(); err != nil {
		return err
	}
	if n := s.logs.reporter.count(); n > 0 {
		return fmt.Errorf("the GitHub stand-in saw %d request(s) or deliveries GitHub would refuse; see %s", n, s.logs.path("github.log"))
	}
	return nil
}
