package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
)

// Labels of the story.
const approveLabel = "sluice/approve"

// story drives the GitOps story and shows it.
type story struct {
	*runner
	out    io.Writer
	st     *stack
	c      client.Client
	scheme *runtime.Scheme
	record *milestones
	// key names the Rollout and the Deployment.
	key      types.NamespacedName
	statuses *statusWatch
	repo     gitopsworld.Repo
	// files are the repository's first commit.
	files map[string]string
	// first, merge and revert are the story's commits; pr the pull
	// request merged as merge.
	first, merge, revert string
	pr                   int
}

// runGitOps starts everything the GitOps story needs, tells it, and with
// --keep leaves it running.
func runGitOps(ctx context.Context, o options, out io.Writer, st *stack) error {
	begin := time.Now()
	fmt.Fprintln(out, "sluice demo: a release driven from Git by real Flux, approved from the pull request, rolled back with git revert")
	cp, err := st.clusterBinaries(ctx)
	if err != nil {
		return err
	}
	fluxBin, err := st.buildFlux(ctx)
	if err != nil {
		return err
	}
	if err := st.startCluster(ctx, cp); err != nil {
		return err
	}
	if err := st.startFlux(ctx, fluxBin); err != nil {
		return err
	}
	if err := st.startGitHub(); err != nil {
		return err
	}
	if err := st.startManager(ctx, true); err != nil {
		return err
	}
	fmt.Fprintf(out, "Ready in %s\n\n", time.Since(begin).Round(100*time.Millisecond))
	s, err := newStory(o, out, st)
	if err != nil {
		return err
	}
	defer func() { _ = s.record.close() }()
	err = s.tell(ctx)
	s.screen.close()
	if err != nil {
		return err
	}
	s.summarize()
	if o.keep {
		return s.keep(ctx)
	}
	return nil
}

// tell tells the story from the first commit to the synced revert.
func (s *story) tell(ctx context.Context) error {
	for _, chapter := range []func(context.Context) error{s.setUp, s.release, s.approve, s.revertBeforeSync, s.sync} {
		if err := chapter(ctx); err != nil {
			return err
		}
	}
	return nil
}

// release merges the pull request that bumps the image and waits until the
// release pauses at step 1 with its pending status on the merge commit.
func (s *story) release(ctx context.Context) error {
	if err := s.countdown(ctx, []string{
		fmt.Sprintf("%s opens a pull request that changes the image in %s to %s; %s merges it.", developer, deploymentFile, newTag, lead),
	}, "merges the pull request"); err != nil {
		return err
	}
	title := "Bump checkout to " + newTag
	pr, err := s.repo.OpenPullRequest(title, developer, map[string]string{deploymentFile: withImageTag(s.files[deploymentFile], stableTag, newTag)})
	if err != nil {
		return err
	}
	merge, err := s.repo.Merge(pr, lead)
	if err != nil {
		return err
	}
	s.pr, s.merge = pr.Number, merge
	s.statuses.track(merge, fmt.Sprintf("PR #%d", pr.Number))
	s.note("%s merged PR #%d %q (by %s) into main as %s", lead, pr.Number, title, developer, short(merge))
	if err := s.push(ctx, s.first, merge, lead, true); err != nil {
		return err
	}
	if _, err := s.watch(ctx, "Flux to apply the merge", []string{
		"Flux fetches main and applies apps/: the Deployment's pod template now names " + newTag + ".",
	}, func(w *world) bool { return w.applied == merge }); err != nil {
		return err
	}
	if err := s.milestone(milestone{Kind: milestoneApplied, Commit: merge}); err != nil {
		return err
	}
	s.note("Flux applied %s; sluice's webhook held the Deployment's update, and the release began", short(merge))
	w, err := s.watch(ctx, "step 1 to pause", []string{
		"sluice releases step 1 (1 pod of " + newTag + "), routes 25% of the requests to it, then pauses.",
		"The GitGate posts the step on the merge commit as a commit status.",
	}, func(w *world) bool { return s.pausedWithStatus(w, 1) })
	if err != nil {
		return err
	}
	return s.paused(w, 1)
}

// approve adds the label sluice/approve to the pull request as the
// reviewer, through GitHub's API, and waits until step 2 pauses.
func (s *story) approve(ctx context.Context) error {
	body, _ := json.Marshal(map[string][]string{"labels": {approveLabel}})
	curl := fmt.Sprintf("curl -X POST -H 'Authorization: token %s' -H 'Content-Type: application/json' %srepos/%s/issues/%d/labels -d '%s'",
		reviewerToken, s.st.github.URL, ghRepo, s.pr, body)
	if err := s.countdown(ctx, []string{
		fmt.Sprintf("%s (write access on %s) checks the new pod and adds the label %s to PR #%d:", reviewer, ghRepo, approveLabel, s.pr),
		"  " + curl,
	}, "adds the label"); err != nil {
		return err
	}
	if err := s.afterPause(ctx); err != nil {
		return err
	}
	sent := len(s.st.github.HookDeliveries())
	if err := labelRequest(ctx, s.st.github.URL, ghRepo, reviewerToken, s.pr, approveLabel); err != nil {
		return err
	}
	var delivered githubfake.HookDelivery
	if err := s.until(ctx, "GitHub's delivery of the label", func(context.Context) (bool, error) {
		for _, d := range s.st.github.HookDeliveries()[sent:] {
			if d.Event == "pull_request" && strings.Contains(string(d.Body), `"action":"labeled"`) {
				delivered = d
				return true, d.Err
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	s.note("%s added the label %s to PR #%d; GitHub delivered pull_request \"labeled\", signed, to sluice, which answered %d",
		reviewer, approveLabel, s.pr, delivered.Status)
	if err := s.milestone(milestone{Kind: milestoneLabel, Step: 1, Delivery: delivered.Status}); err != nil {
		return err
	}
	w, err := s.watch(ctx, "step 2 to pause", []string{
		"sluice re-reads the label and who added it from GitHub (never from the delivery), checks their permission,",
		"approves step 1 in the reviewer's name and releases step 2 (half of the pods, half of the requests).",
	}, func(w *world) bool { return s.pausedWithStatus(w, 2) })
	if err != nil {
		return err
	}
	return s.paused(w, 2)
}

// revertBeforeSync suspends Flux, pushes a revert of the merge and waits
// until every pod and all traffic are back on the stable version, which
// must happen before Flux syncs the revert.
func (s *story) revertBeforeSync(ctx context.Context) error {
	if err := s.countdown(ctx, []string{
		"Something is wrong with " + newTag + ": " + developer + " reverts the merge in Git (git revert -m 1 " + short(s.merge) + " && git push).",
		"First Flux is suspended (flux suspend kustomization " + kustomization + " -n " + demoNamespace + "), so the revert cannot sync yet.",
	}, "reverts the merge"); err != nil {
		return err
	}
	if err := s.st.flux.Suspend(ctx, demoNamespace, kustomization); err != nil {
		return err
	}
	s.note("Suspended Flux's Kustomization %s: it applies nothing, and corrects no drift, until resumed", kustomization)
	revert, err := s.repo.Revert(s.merge)
	if err != nil {
		return err
	}
	s.revert = revert
	s.statuses.track(revert, "revert")
	s.note("%s pushed %s \"Revert \\\"Merge pull request #%d ...\\\"\" to main", developer, short(revert), s.pr)
	if err := s.milestone(milestone{Kind: milestoneReverted, Commit: revert}); err != nil {
		return err
	}
	if err := s.push(ctx, s.merge, revert, developer, false); err != nil {
		return err
	}
	w, err := s.watch(ctx, "every pod and all traffic back on "+stableTag, []string{
		"sluice fetches main, sees a commit that reverts the one being released, and rolls back at once:",
		"the routes first (all requests to " + stableTag + "), then the pods, while Flux still has " + short(s.merge) + " applied.",
	}, func(w *world) bool { return w.onStable(stableTag) })
	if err != nil {
		return err
	}
	if w.applied != s.merge {
		return fmt.Errorf("flux applied %s before the pods and traffic were back on %s: the story needs the revert unsynced", short(w.applied), stableTag)
	}
	if err := s.milestone(s.observed(milestone{Kind: milestoneStable, Applied: w.applied, Suspended: w.suspended}, w)); err != nil {
		return err
	}
	s.note("Before Flux synced the revert (it still has %s applied): %s; %s", short(w.applied), podSummary(w.snapshot), w.traffic())
	// Resume Flux once sluice is done with what it does before the sync:
	// the workload handed back on stable (the Rollout Healthy) or held there
	// (an aborted release, which the sync then completes).
	w, err = s.watch(ctx, "the rollback to settle before the sync", []string{
		"The GitGate marks the merge commit failed, naming the revert; sluice finishes the rollback.",
	}, func(w *world) bool { return s.statuses.newest(s.merge).State == "failure" && rollbackSettled(w) })
	if err != nil {
		return err
	}
	s.note("Rollout %s: %s", appName, w.rollout.Status.Message)
	return nil
}

// rollbackSettled reports every pod and all traffic on the stable version
// with the Rollout either Healthy (the workload handed back) or saying it
// aborted the release (held on stable until Git changes).
func rollbackSettled(w *world) bool {
	ro := w.rollout
	if ro == nil || !w.onStable(stableTag) {
		return false
	}
	if ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy {
		return true
	}
	says := []string{string(ro.Status.Phase), ro.Status.Message}
	if c := ro.Status.CanaryStatus; c != nil {
		says = append(says, string(c.CurrentStepState))
	}
	for _, c := range ro.Status.Conditions {
		says = append(says, c.Reason)
	}
	return strings.Contains(strings.ToLower(strings.Join(says, " ")), "abort")
}

// sync resumes Flux and waits until it applied the revert, the release is
// over, and the revert commit's status is success.
func (s *story) sync(ctx context.Context) error {
	if err := s.countdown(ctx, []string{
		"Flux is resumed (flux resume kustomization " + kustomization + " -n " + demoNamespace + ") and applies the revert: the template in Git is " + stableTag + " again.",
	}, "resumes Flux"); err != nil {
		return err
	}
	// The GitRepository goes on fetching while the Kustomization is
	// suspended: have it fetch the revert first, so that the resumed
	// Kustomization applies the revert and not the merge again.
	if err := s.st.flux.RequestReconcile(ctx, flux.GitRepositoryGVK, demoNamespace, gitRepository); err != nil {
		return err
	}
	if err := s.st.flux.WaitFetched(ctx, demoNamespace, gitRepository, s.revert); err != nil {
		return err
	}
	s.note("Flux's GitRepository %s fetched the revert %s; the suspended Kustomization has not applied it", gitRepository, short(s.revert))
	if err := s.st.flux.Resume(ctx, demoNamespace, kustomization); err != nil {
		return err
	}
	s.note("Resumed Flux's Kustomization %s (flux resume kustomization %s -n %s)", kustomization, kustomization, demoNamespace)
	if _, err := s.watch(ctx, "Flux to apply the revert", []string{
		"Flux fetches main and applies " + short(s.revert) + ".",
	}, func(w *world) bool { return w.applied == s.revert }); err != nil {
		return err
	}
	if err := s.milestone(milestone{Kind: milestoneApplied, Commit: s.revert}); err != nil {
		return err
	}
	s.note("Flux applied the revert %s", short(s.revert))
	w, err := s.watch(ctx, "the rollback to be complete", []string{
		"The template from Git is the stable one again: sluice hands the Deployment back, and the revert commit's status turns success.",
	}, func(w *world) bool {
		return w.rollout != nil && w.rollout.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && w.onStable(stableTag) &&
			s.statuses.newest(s.revert).State == "success" && s.statuses.newest(s.merge).State == "failure"
	})
	if err != nil {
		return err
	}
	final := s.statuses.newest(s.revert)
	return s.milestone(s.observed(milestone{Kind: milestoneDone, Commit: s.revert, State: final.State, Description: final.Description,
		Applied: w.applied, Suspended: w.suspended}, w))
}

// pausedWithStatus reports the release paused at step with the pending
// status of that step on the merge commit.
func (s *story) pausedWithStatus(w *world, step int32) bool {
	st := s.statuses.newest(s.merge)
	return pausedAt(w.snapshot) == step && w.canaryWeight() > 0 && st.State == "pending" &&
		strings.Contains(st.Description, fmt.Sprintf("step %d/3 paused", step))
}

// paused notes and records a paused step.
func (s *story) paused(w *world, step int32) error {
	s.note("Step %d/3 paused: %s; %s", step, podSummary(w.snapshot), w.traffic())
	return s.milestone(s.observed(milestone{Kind: milestonePaused, Step: step}, w))
}

// afterPause waits until the clock is past the second the current step
// paused in: GitHub and Kubernetes keep whole seconds, and sluice counts a
// label of the pause's own second as older than the pause.
func (s *story) afterPause(ctx context.Context) error {
	ro := s.rolloutNow(ctx)
	if ro == nil || ro.Status.CanaryStatus == nil {
		return nil
	}
	paused := ro.Status.CanaryStatus.LastUpdateTime.Time
	return s.until(ctx, "the second after the pause", func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(paused), nil
	})
}

// rolloutNow reads the Rollout, nil when it cannot.
func (s *story) rolloutNow(ctx context.Context) *rolloutsv1beta1.Rollout {
	ro := &rolloutsv1beta1.Rollout{}
	if err := s.c.Get(ctx, s.key, ro); err != nil {
		return nil
	}
	return ro
}

// push has GitHub see what was pushed to main (before to after): it
// delivers the push, signed, to sluice; with syncFlux it also asks Flux to
// fetch and apply at once, as Flux's own webhook receiver would.
func (s *story) push(ctx context.Context, before, after, pusher string, syncFlux bool) error {
	for _, d := range s.st.github.NotifyPush(ctx, ghRepo, "main", before, after, pusher) {
		if d.Err != nil {
			return fmt.Errorf("delivering the push to sluice: %w", d.Err)
		}
		s.note("GitHub delivered push %s..%s, signed, to sluice, which answered %d", short(before), short(after), d.Status)
	}
	if !syncFlux {
		return nil
	}
	if err := s.st.flux.Sync(ctx, demoNamespace, gitRepository, kustomization); err != nil {
		return err
	}
	s.note("Asked Flux to fetch and apply now (flux reconcile kustomization %s --with-source), as its webhook receiver would on a push", kustomization)
	return nil
}

// observed fills in what the world shows of pods and traffic.
func (s *story) observed(m milestone, w *world) milestone {
	m.Pods, m.CanaryWeight, m.StableSelects = w.podsByTag(), w.canaryWeight(), w.selects(w.stable)
	return m
}

// milestone records m.
func (s *story) milestone(m milestone) error {
	return s.record.add(m)
}

// watch redraws the panel with next until done holds for the world, and
// returns that world. It reports every commit status as it appears.
func (s *story) watch(ctx context.Context, what string, next []string, done func(*world) bool) (*world, error) {
	var last *world
	err := s.until(ctx, what, func(ctx context.Context) (bool, error) {
		w, err := observeWorld(ctx, s.c, s.key, kustomization)
		if err != nil {
			return false, err
		}
		last = w
		if err := s.reportStatuses(); err != nil {
			return false, err
		}
		s.screen.draw(s.frame(w, next))
		return done(w), nil
	})
	if err != nil && last != nil {
		return nil, fmt.Errorf("%w; last seen: %s", err, statusLine(s.frame(last, nil)))
	}
	return last, err
}

// countdown redraws the panel with next for the pace, saying when the demo
// will do what.
func (s *story) countdown(ctx context.Context, next []string, does string) error {
	end := time.Now().Add(s.pace)
	for {
		left := time.Until(end)
		w, err := observeWorld(ctx, s.c, s.key, kustomization)
		if err != nil {
			return err
		}
		if err := s.reportStatuses(); err != nil {
			return err
		}
		f := s.frame(w, next)
		if left <= 0 {
			s.screen.draw(f)
			return nil
		}
		f.Countdown = fmt.Sprintf("In %ds the demo %s.", (left+time.Second-1)/time.Second, does)
		s.screen.draw(f)
		if err := s.sleep(ctx, min(tick, left)); err != nil {
			return err
		}
	}
}

// reportStatuses notes each commit status posted since the last call, as
// GitHub shows it.
func (s *story) reportStatuses() error {
	for _, p := range s.statuses.poll() {
		s.note("GitHub %s  %s", p.commit.describe(), checkLine(p.Status))
		if err := s.milestone(milestone{Kind: milestoneStatus, Commit: p.commit.sha, State: p.State, Description: p.Description}); err != nil {
			return err
		}
	}
	return nil
}

// frame builds the panel for the world.
func (s *story) frame(w *world, next []string) frame {
	f := w.frame(fmt.Sprintf("Rollout %s/%s, applied by Flux from %s@main", s.key.Namespace, s.key.Name, ghRepo), next)
	f.Extra = []field{{"traffic", w.traffic()}, {"services", w.selectors()}, {"flux", w.fluxLine(s.commitName)}}
	for _, p := range s.statuses.latest() {
		f.Extra = append(f.Extra, field{"github", p.commit.describe() + " " + checkLine(p.Status)})
	}
	return f
}

// commitName names one of the story's commits: "1a2b3c4 (PR #1)".
func (s *story) commitName(sha string) string {
	switch sha {
	case s.first:
		return short(sha) + " (first commit)"
	case s.merge:
		return fmt.Sprintf("%s (PR #%d)", short(sha), s.pr)
	case s.revert:
		return short(sha) + " (revert)"
	}
	return short(sha)
}

// summarize prints every commit status the story saw, the approvals
// sluice recorded and where the app ended.
func (s *story) summarize() {
	out := s.out
	fmt.Fprintf(out, "\nStory complete after %s.\n", time.Since(s.start).Round(100*time.Millisecond))
	fmt.Fprintf(out, "Commit statuses on GitHub (%s), oldest first:\n", ghRepo)
	for _, sha := range []string{s.merge, s.revert} {
		fmt.Fprintf(out, "  %s\n", s.commitName(sha))
		list := s.st.github.Statuses(ghRepo, sha)
		for _, st := range slices.Backward(list) {
			fmt.Fprintf(out, "    %s\n", checkLine(st))
		}
	}
	if ro := s.rolloutNow(context.Background()); ro != nil {
		printApprovals(out, ro)
	}
	fmt.Fprintln(out)
}
