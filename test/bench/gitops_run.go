package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// runGitOps runs the gitops scenario against a started control plane.
func runGitOps(ctx context.Context, c client.WithWatch, runID string, o options, start func(hookAddr string) error, progress io.Writer) (*gitopsResult, error) {
	gitSrv, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = gitSrv.Close() }()
	hookAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := start(hookAddr); err != nil {
		return nil, err
	}
	s := &gitopsScenario{c: c, runID: runID, ns: "bench-" + runID + "-gitops", n: o.rollouts, prs: o.prs,
		hookURL: "http://" + hookAddr + app.GitHubWebhookPath, progress: progress}
	if s.prs < 1 || s.prs > s.n {
		return nil, errors.New("--prs must be between 1 and --rollouts")
	}
	s.logf("creating %d deployments and rollouts bound to one gitgate", s.n)
	if err := s.setup(ctx, gitSrv); err != nil {
		return nil, err
	}
	defer s.gh.Close()
	res := &gitopsResult{Rollouts: s.n, PullRequests: s.prs}

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	s.logf("merging %d pull requests (v2)", s.prs)
	requests := len(s.gh.Requests())
	prs, merges, err := s.release(ctx, "v2")
	if err != nil {
		return nil, err
	}
	s.logf("every rollout paused at step 1; delivering %d label webhooks", s.prs)
	if res.ApprovalIntent, res.Approval, err = s.approve(ctx, prs); err != nil {
		return nil, err
	}
	if err := s.pollStatuses(ctx, merges, "success", "released"); err != nil {
		return nil, err
	}
	all := s.gh.Requests()
	res.GitHubPerRollout = float64(len(all)-requests) / float64(s.n)
	res.GitHubByOperation = map[string]float64{}
	for _, r := range all[requests:] {
		res.GitHubByOperation[r.Operation] += 1 / float64(s.n)
		if r.Status != http.StatusNotModified {
			res.GitHubSpentPerRollout += 1 / float64(s.n)
		}
	}

	s.logf("idle: counting the GitHub requests of a reconcile with nothing to do")
	if res.GitHubPerIdleReconcile, err = s.idleRequests(ctx, 3); err != nil {
		return nil, err
	}
	res.GitHubPerIdleHour = res.GitHubPerIdleReconcile * float64(time.Hour/time.Minute)

	s.logf("merging %d pull requests (v3)", s.prs)
	if _, merges, err = s.release(ctx, "v3"); err != nil {
		return nil, err
	}
	s.logf("every rollout paused at step 1; pushing %d reverts", s.prs)
	if res.RevertIntent, res.RevertWrite, res.RevertStable, err = s.revert(ctx, merges); err != nil {
		return nil, err
	}
	return res, nil
}

// runGitOpsBench runs the gitops scenario with its own manager, serving
// the GitHub webhook receiver, and prints the figures.
func runGitOpsBench(ctx context.Context, cfg *rest.Config, o options, logger logr.Logger, stdout, stderr io.Writer) (err error) {
	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var stopManager func() error
	start := func(hookAddr string) error {
		m, err := env.StartManager(ctx, cfg, env.ManagerOptions{Name: "sluice-bench", Logger: logger,
			GitAllowInsecureHTTP: true, GitHubWebhookAddr: hookAddr})
		if err != nil {
			return err
		}
		stopManager = m.Stop
		return nil
	}
	defer func() {
		if stopManager != nil {
			err = errors.Join(err, stopManager())
		}
	}()
	log.SetOutput(io.Discard) // the test Git server logs every request
	res, err := runGitOps(ctx, c, rand.String(5), o, start, stderr)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printGitOps(stdout, res)
	return nil
}

// printGitOps prints the gitops scenario's figures.
func printGitOps(w io.Writer, r *gitopsResult) {
	_, _ = fmt.Fprintf(w, "gitops: %d rollouts bound to one GitGate, commits in %d pull requests\n", r.Rollouts, r.PullRequests)
	line := func(what string, v []float64, goal float64) {
		v = sortedCopy(v)
		p50, p99 := percentile(v, 50), percentile(v, 99)
		verdict := "goal met"
		if p99 >= goal {
			verdict = "goal missed"
		}
		_, _ = fmt.Fprintf(w, "  %-44s p50 %6.3fs  p99 %6.3fs  max %6.3fs  (goal p99 < %.0fs: %s)\n", what, p50, p99, percentile(v, 100), goal, verdict)
	}
	line("label delivery -> approval on the Rollout", r.ApprovalIntent, 1)
	line("label delivery -> next batch written", r.Approval, 1)
	line("revert push delivery -> abort on the Rollout", r.RevertIntent, 2)
	line("revert push delivery -> abort written", r.RevertWrite, 2)
	line("revert push delivery -> every pod on stable", r.RevertStable, 2)
	_, _ = fmt.Fprintf(w, "  GitHub requests: %.1f per rollout per release (%.1f not answered 304, so counted by GitHub's rate limit); %.1f per idle reconcile, %.0f per idle hour at the default 1m interval\n",
		r.GitHubPerRollout, r.GitHubSpentPerRollout, r.GitHubPerIdleReconcile, r.GitHubPerIdleHour)
	ops := make([]string, 0, len(r.GitHubByOperation))
	for op := range r.GitHubByOperation {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return r.GitHubByOperation[ops[i]] > r.GitHubByOperation[ops[j]] })
	for _, op := range ops {
		_, _ = fmt.Fprintf(w, "    %-44s %5.1f per rollout per release\n", op, r.GitHubByOperation[op])
	}
}

// sortedCopy is v sorted, for percentile.
func sortedCopy(v []float64) []float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s
}
