package gitops

import (
	"context"
	"sync"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"

	"github.com/sluice-dev/sluice/internal/bounded"
)

// forOneReconcile returns c with its Git reader and SCM client wrapped so
// that, within one reconcile, each question is asked once: the bound
// Rollouts of one commit (a monorepo's pull request that changes many apps)
// share the walk of the commits since it, the revert checks, the pull
// request lookup and the labels, instead of each Rollout asking Git and
// GitHub again. Errors are remembered too, so that a rate limit is met once.
// A new reconcile starts afresh: labels and branches move.
//
// The pull request of a merge commit is remembered longer, as long as the
// gate's clients live: the pull request that created a commit by merging
// never changes.
// One gate is never reconciled twice at once, so c.merged is set without a
// lock.
func forOneReconcile(c *clients) *clients {
	if c.merged == nil {
		c.merged = &mergedPRs{m: bounded.New[string, []scm.PullRequest](maxMergedPRs)}
	}
	if c.settled == nil {
		c.settled = newSettledGit()
	}
	out := *c
	out.git = &memoGit{Reader: c.git, settled: c.settled, since: map[string]*memoized[[]git.Arrival]{}, reverts: map[[2]string]*memoized[git.RevertMatch]{},
		files: map[[2]string]*memoized[[]byte]{}, brought: map[string]*memoized[[]git.Commit]{}}
	if c.scm != nil { // nil: the gate works from Git alone
		out.scm = &memoSCM{
			Client: c.scm, merged: c.merged,
			prs: map[string]*memoized[[]scm.PullRequest]{}, labels: map[int]*memoized[[]scm.AppliedLabel]{}, perms: map[string]*memoized[scm.Permission]{},
			comments: map[int]*memoized[[]scm.Comment]{}, reviews: map[int]*memoized[[]scm.Review]{}, commits: map[int]*memoized[[]scm.CommitAuthor]{},
		}
	}
	return &out
}

// maxMergedPRs bounds how many merge commits' pull requests a gate
// remembers.
const maxMergedPRs = 1024

// mergedPRs remembers, by commit, the pull requests of commits that one of
// them created by merging; the oldest are forgotten first.
type mergedPRs struct {
	m *bounded.Map[string, []scm.PullRequest]
}

func (m *mergedPRs) get(sha string) ([]scm.PullRequest, bool) {
	return m.m.Get(sha)
}

// put remembers prs for sha when one of them merged into sha.
func (m *mergedPRs) put(sha string, prs []scm.PullRequest) {
	for _, pr := range prs {
		if pr.Merged && pr.MergeCommitSHA == sha {
			m.m.PutIfAbsent(sha, prs)
			return
		}
	}
}

// memoized is one remembered answer; done is closed once it is known.
type memoized[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// remember returns the answer for k in m, asking once: the bound Rollouts
// are reconciled concurrently, and one that asks while another is asking
// the same question waits for that answer.
func remember[K comparable, T any](mu *sync.Mutex, m map[K]*memoized[T], k K, ask func() (T, error)) (T, error) {
	mu.Lock()
	if a, ok := m[k]; ok {
		mu.Unlock()
		<-a.done
		return a.v, a.err
	}
	a := &memoized[T]{done: make(chan struct{})}
	m[k] = a
	mu.Unlock()
	defer close(a.done)
	a.v, a.err = ask()
	return a.v, a.err
}

// maxSettled bounds how many answers of each kind settledGit keeps.
const maxSettled = 4096

// settledGit remembers, as long as the gate's clients live, the Git answers
// that depend on commits alone, which never change: whether one commit
// reverts another (a tree diff each), a file of a commit, and the commits a
// merge brought. Only answers are kept, never errors. Without it every
// reconcile diffed the trees of every pair of a release's commit and the
// commits after it again.
type settledGit struct {
	reverts *bounded.Map[[2]string, git.RevertMatch]
	files   *bounded.Map[[2]string, []byte]
	brought *bounded.Map[string, []git.Commit]
}

func newSettledGit() *settledGit {
	return &settledGit{reverts: bounded.New[[2]string, git.RevertMatch](maxSettled), files: bounded.New[[2]string, []byte](maxSettled),
		brought: bounded.New[string, []git.Commit](maxSettled)}
}

// settle returns the lasting answer for k in m, else asks (through the
// reconcile's memo) and keeps a successful answer.
func settle[K comparable, T any](m *bounded.Map[K, T], k K, ask func() (T, error)) (T, error) {
	if v, ok := m.Get(k); ok {
		return v, nil
	}
	v, err := ask()
	if err == nil {
		m.PutIfAbsent(k, v)
	}
	return v, err
}

// memoGit remembers CommitsSince, Reverts, File and Brought for one
// reconcile, and the answers that never change (settledGit) for longer.
type memoGit struct {
	git.Reader
	settled *settledGit
	mu      sync.Mutex
	since   map[string]*memoized[[]git.Arrival]
	reverts map[[2]string]*memoized[git.RevertMatch]
	files   map[[2]string]*memoized[[]byte]
	brought map[string]*memoized[[]git.Commit]
}

// File implements git.Reader.
func (m *memoGit) File(ctx context.Context, sha, p string) ([]byte, error) {
	k := [2]string{sha, p}
	return settle(m.settled.files, k, func() ([]byte, error) {
		return remember(&m.mu, m.files, k, func() ([]byte, error) { return m.Reader.File(ctx, sha, p) })
	})
}

// Brought implements git.Reader.
func (m *memoGit) Brought(ctx context.Context, sha string) ([]git.Commit, error) {
	return settle(m.settled.brought, sha, func() ([]git.Commit, error) {
		return remember(&m.mu, m.brought, sha, func() ([]git.Commit, error) { return m.Reader.Brought(ctx, sha) })
	})
}

var _ git.Reader = (*memoGit)(nil)

// CommitsSince implements git.Reader.
func (m *memoGit) CommitsSince(ctx context.Context, sha string) ([]git.Arrival, error) {
	return remember(&m.mu, m.since, sha, func() ([]git.Arrival, error) { return m.Reader.CommitsSince(ctx, sha) })
}

// Reverts implements git.Reader.
func (m *memoGit) Reverts(ctx context.Context, revert, target string) (git.RevertMatch, error) {
	k := [2]string{revert, target}
	return settle(m.settled.reverts, k, func() (git.RevertMatch, error) {
		return remember(&m.mu, m.reverts, k, func() (git.RevertMatch, error) { return m.Reader.Reverts(ctx, revert, target) })
	})
}

// memoSCM remembers the pull requests of a commit, the labels, comments,
// reviews and commits of a pull request and permissions for one reconcile.
type memoSCM struct {
	scm.Client
	merged   *mergedPRs
	mu       sync.Mutex
	prs      map[string]*memoized[[]scm.PullRequest]
	labels   map[int]*memoized[[]scm.AppliedLabel]
	perms    map[string]*memoized[scm.Permission]
	comments map[int]*memoized[[]scm.Comment]
	reviews  map[int]*memoized[[]scm.Review]
	commits  map[int]*memoized[[]scm.CommitAuthor]
}

// Comments implements scm.CommentReader.
func (m *memoSCM) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	return remember(&m.mu, m.comments, number, func() ([]scm.Comment, error) { return m.Client.Comments(ctx, number) })
}

// Reviews implements scm.ReviewReader.
func (m *memoSCM) Reviews(ctx context.Context, number int) ([]scm.Review, error) {
	return remember(&m.mu, m.reviews, number, func() ([]scm.Review, error) { return m.Client.Reviews(ctx, number) })
}

// PullRequestCommits implements scm.CommitAuthorReader.
func (m *memoSCM) PullRequestCommits(ctx context.Context, number int) ([]scm.CommitAuthor, error) {
	return remember(&m.mu, m.commits, number, func() ([]scm.CommitAuthor, error) { return m.Client.PullRequestCommits(ctx, number) })
}

var _ scm.Client = (*memoSCM)(nil)

// PullRequestsForCommit implements scm.PullRequestReader.
func (m *memoSCM) PullRequestsForCommit(ctx context.Context, sha string) ([]scm.PullRequest, error) {
	if prs, ok := m.merged.get(sha); ok {
		return prs, nil
	}
	return remember(&m.mu, m.prs, sha, func() ([]scm.PullRequest, error) {
		prs, err := m.Client.PullRequestsForCommit(ctx, sha)
		if err == nil {
			m.merged.put(sha, prs)
		}
		return prs, err
	})
}

// Labels implements scm.PullRequestReader.
func (m *memoSCM) Labels(ctx context.Context, number int) ([]scm.AppliedLabel, error) {
	return remember(&m.mu, m.labels, number, func() ([]scm.AppliedLabel, error) { return m.Client.Labels(ctx, number) })
}

// Permission implements scm.PermissionReader.
func (m *memoSCM) Permission(ctx context.Context, user string) (scm.Permission, error) {
	return remember(&m.mu, m.perms, user, func() (scm.Permission, error) { return m.Client.Permission(ctx, user) })
}
