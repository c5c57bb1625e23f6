package main

import (
	"context"
	"fmt"
	"time"
)

// keepPR is the branch of the pull request --keep leaves open to try by
// hand.
const keepPR = "bump-v3"

// keep leaves everything running until ctx ends or something the demo
// started fails, with a pull request to try by hand and the commands to do
// it. Meanwhile the demo plays GitHub's part for what is pushed to the Git
// server: it mirrors the commits on the GitHub stand-in, marks merged a
// pull request whose branch lands on main, delivers the push to sluice and
// asks Flux to sync, and it prints every commit status as it appears.
func (s *story) keep(ctx context.Context) error {
	tag := "v3"
	title := "Bump checkout to " + tag
	pr, err := s.repo.OpenPullRequestOn(keepPR, title, developer, map[string]string{deploymentFile: withImageTag(s.files[deploymentFile], stableTag, tag)})
	if err != nil {
		return err
	}
	gh := s.st.github.URL
	fmt.Fprintf(s.out, `Everything keeps running: the control plane, Flux, the Git server, the GitHub stand-in and sluice.
For what you push to the Git server the demo plays GitHub: it mirrors your commits on the stand-in, marks a
pull request merged when its branch lands on main, delivers the push webhook to sluice and asks Flux to sync.
Commit statuses appear here as GitHub posts them. In another terminal:

  export KUBECONFIG=%[1]s
  kubectl -n %[2]s get rollout,deployment,pods,service,ingress
  go run ./cmd/kubectl-sluice status %[3]s -n %[2]s   # or kubectl sluice, with bin/ on PATH after make build

PR #%[4]d %[5]q (branch %[6]s) is open. Merge it, watch the release pause, approve it, roll it back:

  git clone %[7]s shop && cd shop
  git fetch origin %[6]s && git merge --ff-only FETCH_HEAD && git push origin HEAD:main
  curl -H 'Authorization: token %[8]s' %[9]srepos/%[10]s/commits/$(git rev-parse HEAD)/statuses
  curl -X POST -H 'Authorization: token %[8]s' -H 'Content-Type: application/json' %[9]srepos/%[10]s/issues/%[4]d/labels -d '{"labels":["%[11]s"]}'
  git revert --no-edit HEAD && git push origin HEAD:main

(%[12]s has write access on %[10]s; labels count only when added after the step paused.)
Press Ctrl-C here to stop everything the demo started.
`, s.st.cluster.KubeconfigPath(), demoNamespace, appName, pr.Number, title, keepPR, s.repo.Git.URL(),
		reviewerToken, gh, ghRepo, approveLabel, reviewer)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	refused := s.st.logs.reporter.count()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.st.cluster.Failed():
			return fmt.Errorf("the local control plane failed: %w", err)
		case <-t.C:
		}
		if err := s.st.processFailed(); err != nil {
			return err
		}
		// A request typed by hand may be one GitHub refuses: say so, and
		// go on.
		if n := s.st.logs.reporter.count(); n > refused {
			refused = n
			s.note("The GitHub stand-in refused a request or delivery GitHub would refuse too; see %s", s.st.logs.path("github.log"))
		}
		if err := s.mirrorHandPush(ctx); err != nil {
			return err
		}
		if err := s.reportStatuses(); err != nil {
			return err
		}
	}
}

// mirrorHandPush plays GitHub for a push to main made by hand, if there
// was one.
func (s *story) mirrorHandPush(ctx context.Context) error {
	p, err := s.repo.MirrorPush("main", developer)
	if err != nil || p.Before == p.After {
		return err
	}
	name := "your push"
	for _, n := range p.Merged {
		name = fmt.Sprintf("PR #%d", n)
		s.note("GitHub: the push merged PR #%d", n)
	}
	s.statuses.track(p.After, name)
	commits := "commits"
	if len(p.Mirrored) == 1 {
		commits = "commit"
	}
	s.note("GitHub saw a push to main, %s..%s (%d new %s)", short(p.Before), short(p.After), len(p.Mirrored), commits)
	return s.push(ctx, p.Before, p.After, developer, true)
}
