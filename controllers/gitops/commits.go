package gitops

import (
	"context"
	"fmt"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/appliedcommit"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// maxReleaseCommits bounds the release's commits besides its revision.
const maxReleaseCommits = 20

// releaseCommits lists the release's commits besides head: the commits of
// the branch's first-parent line after base (the commit the gate followed
// before) that changed path, the directory the GitOps tool applies, oldest
// first. A sync that brings several commits (two merges within one
// interval, an app commit under an unrelated one) so has its statuses and
// labels on every commit that changed the workload, not only on the head
// the tool names. Without a base (first sight), or when base is no longer
// on the branch (a force-push dropped it), there are none: head alone.
func (r *Reconciler) releaseCommits(ctx context.Context, s *scope, base, head, path string) []string {
	if base == "" || base == head {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	arrivals, err := s.c.git.CommitsSince(ctx, base)
	if err != nil {
		log.Info("Release commits not read", "base", base, "reason", err.Error())
		return nil
	}
	var paths []string
	if path != "" {
		paths = []string{path}
	}
	var out []string
	for _, a := range arrivals {
		if a.SHA == head {
			break // what the tool applied; later commits are not in it
		}
		if a.Via != a.SHA {
			continue // merged in from a side branch: its merge counts
		}
		touched, err := s.c.git.Touches(ctx, a.SHA, paths)
		if err != nil {
			log.Info("Commit's paths not read", "sha", a.SHA, "reason", err.Error())
			continue
		}
		if touched {
			out = append(out, a.SHA)
		}
	}
	if len(out) > maxReleaseCommits {
		out = out[len(out)-maxReleaseCommits:]
	}
	return out
}

// releaseSHAs are the release's commits, its revision first.
func (o Observation) releaseSHAs() []string {
	out := []string{o.Revision}
	for _, c := range o.Commits {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// caughtUp returns an error wrapping appliedcommit.ErrApplying while the
// Rollout's status has not caught up with its workload's pod template yet:
// the GitOps tool has applied a new template (and may already name its
// commit) while the Rollout still shows the previous release, Healthy on
// the old canary revision. Tying the release to a commit then would tie the
// old release to the new commit, or the new release to the old one. The
// template's revision is computed from w, the copy of the workload the
// commit was read with, where its kind allows (Deployments); other kinds'
// revisions are read through their Releaser.
func (r *Reconciler) caughtUp(ctx context.Context, ro *rolloutsv1beta1.Rollout, w client.Object, v RolloutView) error {
	if v.CanaryRevision == "" {
		return nil
	}
	update, ok := kinds.TemplateRevision(w.GetObjectKind().GroupVersionKind().GroupKind(), w)
	if !ok {
		// The kind's controller names its revisions: its Releaser reads them.
		rel, err := kinds.New(r.Client, r.APIReader, workload.Target{Namespace: ro.Namespace, Ref: ro.Spec.WorkloadRef, Style: coverage.Style(ro)})
		if err != nil {
			return nil //nolint:nilerr // an unsupported workload: the Rollout says why
		}
		ws, err := rel.Status(ctx)
		if err != nil || ws.UpdateRevision == "" {
			return nil //nolint:nilerr // read again at the next reconcile; the revision source reports a missing workload
		}
		update = ws.UpdateRevision
	}
	if update != v.CanaryRevision {
		return fmt.Errorf("%w: the Rollout has not caught up with the workload's new pod template %s yet (it shows %s)",
			appliedcommit.ErrApplying, update, v.CanaryRevision)
	}
	return nil
}

// observePullRequests finds the pull requests of the release's commits,
// their sluice labels and their authors' permissions. SCM errors leave them
// out. The pull request of the revision (else of the newest commit that has
// one) is the release's; a label on any of them counts. While no release is
// in progress or aborted, only the revision's pull request is read.
func (r *Reconciler) observePullRequests(ctx context.Context, s *scope, o *Observation) {
	log := ctrl.LoggerFrom(ctx)
	if _, limited := s.rateLimited(r.Clock.Now()); s.c.scm == nil || limited {
		return
	}
	if !s.policy.AllowSelfApproval && o.Rollout.InRelease {
		// Until every pull request's commits are read, nobody is known not
		// to be an author (observeHostAuthors).
		o.HostAuthorsUnread = "the pull requests' commits are not read yet"
	}
	shas := o.releaseSHAs()
	if !o.Rollout.InRelease && o.Rollout.Aborted == nil {
		shas = shas[:1]
	}
	var numbers []int
	revisionPR, newest := 0, 0
	for i, sha := range shas {
		prs, err := s.c.scm.PullRequestsForCommit(ctx, sha)
		if err != nil {
			s.noteSCM(err)
			log.Info("Pull requests not read", "sha", sha, "reason", err.Error())
			return
		}
		number := 0
		for _, pr := range prs {
			if pr.MergeCommitSHA == sha || number == 0 {
				number = pr.Number
			}
			if pr.Author != "" {
				if o.Authors == nil {
					o.Authors = map[int]string{}
				}
				o.Authors[pr.Number] = pr.Author
			}
		}
		if number == 0 {
			continue
		}
		if i == 0 {
			revisionPR = number
		} else {
			newest = number // Commits are oldest first
		}
		if !slices.Contains(numbers, number) {
			numbers = append(numbers, number)
		}
	}
	o.PullRequest = revisionPR
	if o.PullRequest == 0 {
		o.PullRequest = newest
	}
	for _, n := range numbers {
		if !r.observeLabels(ctx, s, o, n) || !r.observeConversation(ctx, s, o, n) {
			return
		}
	}
	r.observeHostAuthors(ctx, s, o, numbers)
	r.observeMembers(ctx, s, o)
}

// observeLabels reads the sluice labels of pull request n and their
// authors' permissions; false when the SCM failed.
func (r *Reconciler) observeLabels(ctx context.Context, s *scope, o *Observation, n int) bool {
	log := ctrl.LoggerFrom(ctx)
	labels, err := s.c.scm.Labels(ctx, n)
	if err != nil {
		s.noteSCM(err)
		log.Info("Labels not read", "pullRequest", n, "reason", err.Error())
		return false
	}
	for _, l := range labels {
		if !s.policy.Names(l.Name) {
			continue
		}
		a, ok := r.actorOf(ctx, s, l.AddedBy)
		if !ok {
			continue
		}
		o.Labels = append(o.Labels, Label{AppliedLabel: l, Permission: a.Permission, Teams: a.Teams, PullRequest: n})
	}
	return true
}
