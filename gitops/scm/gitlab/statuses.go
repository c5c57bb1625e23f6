package gitlab

import (
	"context"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/internal/bounded"
)

// maxStatusPages bounds the listing of a commit's statuses of one name.
const maxStatusPages = 10

// shown is a commit status as GitLab shows it: its GitLab state, and the pipeline and ref it
// belongs to (a later transition names both, so that it updates this status and no other).
type shown struct {
	state       gl.BuildStateValue
	description string
	targetURL   string
	ref         string
	pipelineID  int64
}

// finished tells whether GitLab starts a new status on the next post (a status is updated in
// place only while pending or running).
func (s shown) finished() bool {
	return s.state != gl.Pending && s.state != gl.Running
}

// gitlabState maps sluice's states onto GitLab's: a rollout in progress is running, completed is
// success, rolled back (failure) and undetermined (error; GitLab has no such state) are failed.
// sluice posts canceled only to restart a running status (see plan), and never skipped.
func gitlabState(s scm.CommitState) gl.BuildStateValue {
	switch s {
	case scm.StatePending:
		return gl.Running
	case scm.StateSuccess:
		return gl.Success
	}
	return gl.Failed
}

// plan returns the states to post, in order, to take a status GitLab shows (known false when
// the commit has none of that name) to want. GitLab updates a pending or running status in place
// and only along its state machine: pending may go to running or finish; running may only
// finish; a finished status is followed by a new one, which may start in any state; and a
// description changes only with a transition. So:
//
//   - nothing is posted when GitLab shows want already (state, description and target URL);
//   - a rollout in progress is running: a status GitLab shows pending (posted by an older
//     sluice, or by someone else) goes to running with the new description;
//   - a running status that must say something new (the next step, an approval counted) cannot
//     be described anew: GitLab refuses running→running ("Cannot transition status via :run
//     from :running"). It is restarted: canceled, then a new status of the same name and
//     pipeline runs with the new description (GitLab marks the canceled one retried, and shows
//     the new one);
//   - a final state on a pending status goes through running first, so that GitLab records when
//     the rollout started and shows its duration;
//   - anything else is one post (a running status finishing, or a new status after a finished
//     one).
func plan(cur shown, known bool, want scm.CommitStatus) []gl.BuildStateValue {
	target := gitlabState(want.State)
	if known && cur.state == target && cur.description == want.Description && cur.targetURL == want.TargetURL {
		return nil
	}
	if !known || cur.finished() {
		return []gl.BuildStateValue{target}
	}
	switch {
	case target == gl.Running && cur.state == gl.Running:
		return []gl.BuildStateValue{gl.Canceled, gl.Running}
	case target != gl.Running && cur.state == gl.Pending:
		return []gl.BuildStateValue{gl.Running, target}
	}
	return []gl.BuildStateValue{target}
}

// SetStatus implements scm.CommitStatusWriter on GitLab's state machine (see plan): posted is
// false when there is nothing to post. Calls are serialised, so two callers never post the same
// status twice. A failed post is forgotten: the next call for that (sha, name) reads the
// commit's statuses again before posting, in case it was applied after all.
//
// The name is compared exactly, as GitLab does. A transition names the status's pipeline and
// ref, so that it updates the status it read even when another pipeline of the commit started
// since, and so does the new status that replaces a restarted one, so that it lands beside it; a
// new status after a finished one names neither, and GitLab attaches it to the commit's newest
// pipeline (or a new external one on the first branch that contains the commit).
func (c *Client) SetStatus(ctx context.Context, sha string, status scm.CommitStatus) (bool, error) {
	status, err := status.Validate()
	if err != nil {
		return false, err
	}
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	cur, known := c.statuses.get(sha, status.Context)
	if !known {
		if cur, known, err = c.latestStatus(ctx, sha, status.Context); err != nil {
			return false, err
		}
		if known {
			c.statuses.put(sha, status.Context, cur)
		}
	}
	steps := plan(cur, known, status)
	// The status GitLab shows when it is still pending or running: every post names its
	// pipeline and ref (its transitions, and the status that replaces it in a restart).
	anchored, anchor := known && !cur.finished(), cur
	for _, state := range steps {
		opt := &gl.SetCommitStatusOptions{State: state, Name: gl.Ptr(status.Context)}
		if state != gl.Canceled { // a restarted status keeps what it said
			opt.Description = gl.Ptr(status.Description)
			if status.TargetURL != "" {
				opt.TargetURL = gl.Ptr(status.TargetURL)
			}
		}
		if anchored {
			opt.Ref, opt.PipelineID = gl.Ptr(anchor.ref), gl.Ptr(anchor.pipelineID)
		}
		posted, resp, err := c.api.Commits.SetCommitStatus(c.project, sha, opt, gl.WithContext(ctx))
		if err != nil {
			c.statuses.forget(sha, status.Context)
			return false, mapError(err, resp, fmt.Sprintf("setting the status %s of commit %s to %s", status.Context, sha, state))
		}
		c.statuses.put(sha, status.Context, shownOf(posted))
	}
	return len(steps) > 0, nil
}

// latestStatus finds the newest status named name on sha: GitLab lists the latest status of
// each name per pipeline, and the newest has the highest id.
func (c *Client) latestStatus(ctx context.Context, sha, name string) (shown, bool, error) {
	opt := &gl.GetCommitStatusesOptions{Name: gl.Ptr(name), ListOptions: gl.ListOptions{PerPage: 100}}
	var newest *gl.CommitStatus
	options := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	for page := 0; page < maxStatusPages; page++ {
		list, resp, err := c.api.Commits.GetCommitStatuses(c.project, sha, opt, options...)
		if err != nil {
			return shown{}, false, mapError(err, resp, "the statuses of commit "+sha)
		}
		for _, s := range list {
			if s.Name == name && (newest == nil || s.ID > newest.ID) {
				newest = s
			}
		}
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), next}
	}
	if newest == nil {
		return shown{}, false, nil
	}
	return shownOf(newest), true, nil
}

func shownOf(s *gl.CommitStatus) shown {
	return shown{state: gl.BuildStateValue(s.Status), description: s.Description, targetURL: s.TargetURL, ref: s.Ref, pipelineID: s.PipelineID}
}

// statusBook remembers what GitLab shows per (commit, name), at most size of them, forgetting
// the oldest first. Names compare exactly, as GitLab compares them.
type statusBook struct {
	m *bounded.Map[string, shown]
}

func newStatusBook(size int) *statusBook {
	return &statusBook{m: bounded.New[string, shown](size)}
}

func bookKey(sha, name string) string { return sha + "\x00" + name }

func (b *statusBook) get(sha, name string) (shown, bool) { return b.m.Get(bookKey(sha, name)) }

func (b *statusBook) put(sha, name string, s shown) { b.m.Put(bookKey(sha, name), s) }

func (b *statusBook) forget(sha, name string) { b.m.Forget(bookKey(sha, name)) }
