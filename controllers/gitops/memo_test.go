package gitops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/poll"
)

// countingGit counts the walks and revert checks asked of it.
type countingGit struct {
	git.Reader
	since, reverts int
}

func (c *countingGit) CommitsSince(context.Context, string) ([]git.Arrival, error) {
	c.since++
	return []git.Arrival{{Via: "b"}}, nil
}

func (c *countingGit) Reverts(context.Context, string, string) (git.RevertMatch, error) {
	c.reverts++
	return git.RevertMatch{}, errors.New("unreadable")
}

// countingSCM counts the pull request, label and permission reads.
type countingSCM struct {
	scm.Client
	prs, labels, perms int
}

func (c *countingSCM) PullRequestsForCommit(context.Context, string) ([]scm.PullRequest, error) {
	c.prs++
	return []scm.PullRequest{{Number: 7, Merged: true, MergeCommitSHA: "a"}}, nil
}

func (c *countingSCM) Labels(context.Context, int) ([]scm.AppliedLabel, error) {
	c.labels++
	return nil, nil
}

func (c *countingSCM) Permission(context.Context, string) (scm.Permission, error) {
	c.perms++
	return scm.PermissionWrite, nil
}

// Ten Rollouts of one commit in one reconcile read Git and GitHub once;
// the next reconcile reads again.
func TestForOneReconcile_asksOncePerCommitAndPullRequest(t *testing.T) {
	g, s := &countingGit{}, &countingSCM{}
	base := &clients{git: g, scm: s}
	ctx := context.Background()
	for range 2 {
		c := forOneReconcile(base)
		for range 10 {
			if a, err := c.git.CommitsSince(ctx, "a"); err != nil || len(a) != 1 {
				t.Fatalf("CommitsSince = %v, %v", a, err)
			}
			if _, err := c.git.Reverts(ctx, "b", "a"); err == nil {
				t.Fatal("a remembered error was lost")
			}
			if prs, _ := c.scm.PullRequestsForCommit(ctx, "a"); len(prs) != 1 {
				t.Fatalf("pull requests = %v", prs)
			}
			_, _ = c.scm.Labels(ctx, 7)
			_, _ = c.scm.Permission(ctx, "reviewer")
		}
		_, _ = c.git.CommitsSince(ctx, "other")
		_, _ = c.scm.PullRequestsForCommit(ctx, "not-a-merge")
	}
	// The merge commit's pull request is read once for both reconciles; the
	// other commit's, whose pull request did not merge into it, once each.
	if g.since != 4 || g.reverts != 2 || s.prs != 3 || s.labels != 2 || s.perms != 2 {
		t.Fatalf("asked since %d, reverts %d, prs %d, labels %d, perms %d; want 4, 2, 3, 2, 2", g.since, g.reverts, s.prs, s.labels, s.perms)
	}
}

// slowLabels answers Labels only once the test lets it, counting the asks.
type slowLabels struct {
	scm.Client
	asks    atomic.Int32
	release chan struct{}
}

func (s *slowLabels) Labels(context.Context, int) ([]scm.AppliedLabel, error) {
	s.asks.Add(1)
	<-s.release
	return []scm.AppliedLabel{{Name: "sluice/approve", AddedBy: "alice"}}, nil
}

// Rollouts reconciled side by side that ask for the same pull request's
// labels while the first ask is still out get its answer: the host is
// asked once.
func TestForOneReconcile_concurrentAsksOfOneQuestionShareTheAnswer(t *testing.T) {
	s := &slowLabels{release: make(chan struct{})}
	c := forOneReconcile(&clients{git: &countingGit{}, scm: s})
	var wg sync.WaitGroup
	got := make([][]scm.AppliedLabel, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = c.scm.Labels(context.Background(), 7)
		}()
	}
	poll.Until(t, "the first ask", func() (bool, string) { return s.asks.Load() >= 1, fmt.Sprint(s.asks.Load()) })
	close(s.release)
	wg.Wait()
	if n := s.asks.Load(); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	}
	for i, l := range got {
		if len(l) != 1 || l[0].AddedBy != "alice" {
			t.Fatalf("asker %d got %v", i, l)
		}
	}
}
