package gitlab

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/gitlabfake"
)

func TestPullRequestsForCommit_findsTheMergeRequestOfEveryMergeMethod(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	for _, tt := range []struct {
		method gitlabfake.MergeMethod
		branch string
	}{{gitlabfake.MergeCommit, "feature-merge"}, {gitlabfake.SquashMerge, "feature-squash"}, {gitlabfake.FastForward, "feature-ff"}} {
		t.Run(string(tt.method), func(t *testing.T) {
			if tt.method == gitlabfake.FastForward {
				// A fast-forward needs a branch from main's head.
				w.fake.Push(testProject, tt.branch, "bob", map[string]string{"deploy/app.yaml": "image: app:ff\n"}, nil, "Ship ff")
				iid := w.fake.OpenMergeRequest(testProject, "bob", tt.branch, "main", "Ship ff")
				head := w.fake.MergeMergeRequest(testProject, iid, "alice", tt.method)
				assertMerged(t, c, head, int(iid))
				return
			}
			iid, head := w.mergedChange(tt.branch, map[string]string{"deploy/app.yaml": "image: app:" + tt.branch + "\n"}, "Ship "+tt.branch, tt.method)
			assertMerged(t, c, head, int(iid))
			_ = ctx
		})
	}
}

func assertMerged(t *testing.T, c *Client, head string, iid int) {
	t.Helper()
	ctx := testContext(t)
	prs, err := c.PullRequestsForCommit(ctx, head)
	check(t, err)
	if len(prs) == 0 {
		t.Fatalf("no merge request for commit %s", head)
	}
	pr := prs[0]
	if pr.Number != iid || !pr.Merged || pr.State != "closed" || pr.MergeCommitSHA != head || pr.BaseRef != "main" || pr.Author != "bob" || pr.URL == "" {
		t.Fatalf("merge request of %s = %+v; want !%d merged as it, by bob, into main", head, pr, iid)
	}
	got, err := c.PullRequest(ctx, iid)
	check(t, err)
	if got.Number != iid || got.MergeCommitSHA != head || got.HeadRef == "" || got.HeadSHA == "" {
		t.Fatalf("PullRequest(%d) = %+v", iid, got)
	}
}

func TestPullRequestsForCommit_listsOpenMergeRequestsThatBringTheCommit(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	head := w.fake.Push(testProject, "feature", "bob", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, nil, "Bump to v2")
	iid := w.fake.OpenMergeRequest(testProject, "bob", "feature", "main", "Bump to v2")
	prs, err := c.PullRequestsForCommit(ctx, head)
	check(t, err)
	if len(prs) != 1 || prs[0].Number != int(iid) || prs[0].State != "open" || prs[0].Merged || prs[0].HeadSHA != head || prs[0].MergeCommitSHA != "" {
		t.Fatalf("merge requests of %s = %+v; want the open !%d", head, prs, iid)
	}
	if prs, err := c.PullRequestsForCommit(ctx, w.first); err != nil || len(prs) != 0 {
		t.Fatalf("merge requests of the first commit = %+v, %v; want none", prs, err)
	}
	if _, err := c.PullRequest(ctx, 99); !scm.IsNotFound(err) {
		t.Fatalf("PullRequest(99) = %v; want a NotFoundError", err)
	}
}

func TestLabels_attributesEachLabelToWhoAddedItLast(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	w.fake.Push(testProject, "feature", "bob", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, nil, "Bump to v2")
	iid := w.fake.OpenMergeRequest(testProject, "bob", "feature", "main", "Bump to v2")

	// Given alice adds sluice/approve, bob removes it and carol adds it again, and many label
	// changes in between (more than a page of events).
	w.clock.Advance(time.Minute)
	w.fake.AddLabels(testProject, iid, "alice", "sluice/approve", "team::payments")
	w.clock.Advance(time.Minute)
	w.fake.RemoveLabels(testProject, iid, "bob", "sluice/approve")
	for i := range 60 {
		w.fake.AddLabels(testProject, iid, "dave", fmt.Sprintf("noise-%d", i))
		w.fake.RemoveLabels(testProject, iid, "dave", fmt.Sprintf("noise-%d", i))
	}
	w.clock.Advance(time.Minute)
	addedAt := w.clock.Now()
	w.fake.AddLabels(testProject, iid, "carol", "Sluice/Approve")

	labels, err := c.Labels(ctx, int(iid))
	check(t, err)
	byName := map[string]scm.AppliedLabel{}
	for _, l := range labels {
		byName[l.Name] = l
	}
	if len(labels) != 2 {
		t.Fatalf("labels = %+v; want two", labels)
	}
	if l := byName["Sluice/Approve"]; l.AddedBy != "carol" || !l.AddedAt.Equal(addedAt) {
		t.Fatalf("Sluice/Approve = %+v; want added by carol at %s", l, addedAt)
	}
	if l := byName["team::payments"]; l.AddedBy != "alice" {
		t.Fatalf("team::payments = %+v; want added by alice", l)
	}
	// When GitLab has no history for a label, it is attributed to nobody.
	w.fake.ForgetLabelEvents(testProject, iid)
	labels, err = c.Labels(ctx, int(iid))
	check(t, err)
	for _, l := range labels {
		if l.AddedBy != "" {
			t.Fatalf("label %+v without history has an author", l)
		}
	}
}
