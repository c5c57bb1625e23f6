package gitlab

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Given a merge request by bob with comments, a push and approvals
// When the gate reads its comments, reviews and the authors of its commits
// Then the comments are the notes people wrote (edited ones with their edit time), without
// GitLab's system notes; the reviews are the approvals standing now, each at the time of its
// latest "approved this merge request" note; and bob's commits name his account, found by his
// e-mail.
func TestConversation_notesApprovalsAndCommitAuthors(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	first := w.fake.Push(testProject, "feature", "bob", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, nil, "Bump to v2")
	iid := w.fake.OpenMergeRequest(testProject, "bob", "feature", "main", "Bump to v2")
	t0 := w.clock.Now()

	// Notes: carol comments and later edits; a push adds a system note; alice comments.
	id := w.fake.CommentOnMergeRequest(testProject, iid, "carol", "LGTM")
	w.clock.Advance(time.Minute)
	second := w.fake.Push(testProject, "feature", "bob", map[string]string{"deploy/app.yaml": "image: app:v2.1\n"}, nil, "Tweak")
	w.fake.CommentOnMergeRequest(testProject, iid, "alice", "/sluice approve")
	w.clock.Advance(time.Minute)
	w.fake.EditNote(testProject, iid, id, "LGTM\n/sluice approve")
	comments, err := c.Comments(ctx, int(iid))
	check(t, err)
	if len(comments) != 2 {
		t.Fatalf("comments = %+v, want carol's and alice's", comments)
	}
	comments[1].ID = 0
	want := []scm.Comment{
		{ID: id, Author: "carol", Body: "LGTM\n/sluice approve", CreatedAt: t0, UpdatedAt: t0.Add(2 * time.Minute)},
		{Author: "alice", Body: "/sluice approve", CreatedAt: t0.Add(time.Minute), UpdatedAt: t0.Add(time.Minute)},
	}
	if !reflect.DeepEqual(comments, want) {
		t.Errorf("comments = %+v\nwant %+v", comments, want)
	}

	// Approvals: alice approves; the bot approves, takes it back and approves again later;
	// carol (a reporter) may not approve.
	if reviews, err := c.Reviews(ctx, int(iid)); err != nil || len(reviews) != 0 {
		t.Fatalf("reviews before any approval = %+v, %v", reviews, err)
	}
	w.fake.ApproveMergeRequest(testProject, iid, "alice")
	w.fake.ApproveMergeRequest(testProject, iid, "sluice-bot")
	w.clock.Advance(time.Minute)
	w.fake.UnapproveMergeRequest(testProject, iid, "sluice-bot")
	w.clock.Advance(time.Minute)
	w.fake.ApproveMergeRequest(testProject, iid, "sluice-bot")
	reviews, err := c.Reviews(ctx, int(iid))
	check(t, err)
	wantReviews := []scm.Review{
		{Author: "alice", State: scm.ReviewApproved, SubmittedAt: t0.Add(2 * time.Minute)},
		{Author: "sluice-bot", State: scm.ReviewApproved, SubmittedAt: t0.Add(4 * time.Minute)},
	}
	if !reflect.DeepEqual(reviews, wantReviews) {
		t.Errorf("reviews = %+v\nwant %+v", reviews, wantReviews)
	}
	w.fake.UnapproveMergeRequest(testProject, iid, "alice")
	if reviews, err := c.Reviews(ctx, int(iid)); err != nil || len(reviews) != 1 || reviews[0].Author != "sluice-bot" {
		t.Errorf("reviews after alice took hers back = %+v, %v", reviews, err)
	}
	if comments, err := c.Comments(ctx, int(iid)); err != nil || len(comments) != 2 {
		t.Errorf("the approvals' system notes came back as comments: %+v, %v", comments, err)
	}

	// Commits: bob's two, oldest first, his account found by his e-mail.
	commits, err := c.PullRequestCommits(ctx, int(iid))
	check(t, err)
	wantCommits := []scm.CommitAuthor{
		{SHA: first, Login: "bob", Email: "bob@example.com", Name: "Bob"},
		{SHA: second, Login: "bob", Email: "bob@example.com", Name: "Bob"},
	}
	if !reflect.DeepEqual(commits, wantCommits) {
		t.Errorf("commits = %+v\nwant %+v", commits, wantCommits)
	}
}

// Given a merge request that does not exist
// When the gate reads its comments and approvals
// Then it gets a scm.NotFoundError.
func TestConversation_unknownMergeRequestIsNotFound(t *testing.T) {
	w := newWorld(t)
	c := w.client(t, Options{})
	if _, err := c.Comments(testContext(t), 99); !scm.IsNotFound(err) {
		t.Errorf("comments error = %v, want a NotFoundError", err)
	}
	if _, err := c.Reviews(testContext(t), 99); !scm.IsNotFound(err) {
		t.Errorf("reviews error = %v, want a NotFoundError", err)
	}
}
