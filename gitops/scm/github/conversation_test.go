package github

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// Given a merged pull request by bob, with a conversation and reviews
// When the gate reads its comments, reviews and the authors of its commits
// Then it gets each comment with its author and edit time, the approving, changes-requested and
// dismissed reviews (not the comment-only one), and the commits with the account GitHub links
// to their author's e-mail.
func TestConversation_commentsReviewsAndCommitAuthors(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	fake.SetUserEmail("bob", "bob@example.com")
	first := fake.Commit(testRepo, "bump", "main", "Bump app to v2", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, githubfake.Signature{Name: "Bob", Email: "bob@example.com"})
	second := fake.Commit(testRepo, "bump", "main", "Tweak", map[string]string{"deploy/app.yaml": "image: app:v2.1\n"}, githubfake.Signature{Name: "Contractor", Email: "c@elsewhere.example"})
	number := fake.OpenPullRequest(testRepo, "bump", "main", "Bump app to v2", "bob")
	fake.MergePullRequest(testRepo, number, "alice")
	t0 := clock.Now()

	// Comments: alice writes and later edits; carol writes one more.
	id := fake.AddComment(testRepo, number, "alice", "LGTM")
	clock.Advance(time.Minute)
	fake.AddComment(testRepo, number, "carol", "/sluice approve")
	clock.Advance(time.Minute)
	fake.EditComment(testRepo, id, "LGTM\n/sluice approve step=2")
	comments, err := c.Comments(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	want := []scm.Comment{
		{ID: id, Author: "alice", Body: "LGTM\n/sluice approve step=2", CreatedAt: t0, UpdatedAt: t0.Add(2 * time.Minute)},
		{Author: "carol", Body: "/sluice approve", CreatedAt: t0.Add(time.Minute), UpdatedAt: t0.Add(time.Minute)},
	}
	if len(comments) != 2 {
		t.Fatalf("comments = %+v", comments)
	}
	comments[1].ID = 0
	if !reflect.DeepEqual(comments, want) {
		t.Errorf("comments = %+v\nwant %+v", comments, want)
	}

	// Reviews: dave approves, erin comments, frank requests changes, dave's approval is
	// dismissed and he approves again.
	approved := fake.Review(testRepo, number, "dave", githubfake.ReviewApproved, "")
	fake.Review(testRepo, number, "erin", githubfake.ReviewCommented, "nit")
	clock.Advance(time.Minute)
	fake.Review(testRepo, number, "frank", githubfake.ReviewChangesRequested, "no")
	fake.DismissReview(testRepo, number, approved)
	clock.Advance(time.Minute)
	fake.Review(testRepo, number, "dave", githubfake.ReviewApproved, "again")
	reviews, err := c.Reviews(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reviews {
		got = append(got, r.Author+" "+string(r.State)+" "+r.SubmittedAt.Sub(t0).String())
		if r.ID == 0 || r.CommitID == "" {
			t.Errorf("review %+v lacks its id or commit", r)
		}
	}
	if w := "dave dismissed 2m0s, frank changes_requested 3m0s, dave approved 4m0s"; strings.Join(got, ", ") != w {
		t.Errorf("reviews = %s, want %s", strings.Join(got, ", "), w)
	}

	// Commits: bob's is linked to his account, the contractor's e-mail to none.
	commits, err := c.PullRequestCommits(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	wantCommits := []scm.CommitAuthor{
		{SHA: first, Login: "bob", Email: "bob@example.com", Name: "Bob"},
		{SHA: second, Email: "c@elsewhere.example", Name: "Contractor"},
	}
	if !reflect.DeepEqual(commits, wantCommits) {
		t.Errorf("commits = %+v\nwant %+v", commits, wantCommits)
	}
}

// Given a pull request with more comments than fit one page
// When the gate reads its comments
// Then it follows GitHub's Link header through every page.
func TestComments_readsEveryPage(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	fake.Commit(testRepo, "bump", "main", "Bump", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, githubfake.Signature{Name: "Bob", Email: "bob@example.com"})
	number := fake.OpenPullRequest(testRepo, "bump", "main", "Bump", "bob")
	for i := 0; i < 150; i++ {
		fake.AddComment(testRepo, number, "alice", "ping")
	}
	comments, err := c.Comments(context.Background(), number)
	if err != nil || len(comments) != 150 {
		t.Fatalf("%d comments, %v; want 150", len(comments), err)
	}
	if n := fake.Count("issues/list-comments"); n != 2 {
		t.Errorf("%d requests, want 2 pages", n)
	}
}

// Given a pull request that does not exist
// When the gate reads its comments
// Then it gets a scm.NotFoundError.
func TestComments_unknownPullRequestIsNotFound(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	if _, err := c.Comments(context.Background(), 99); !scm.IsNotFound(err) {
		t.Errorf("error = %v, want a NotFoundError", err)
	}
	if _, err := c.Reviews(context.Background(), 99); !scm.IsNotFound(err) {
		t.Errorf("reviews error = %v, want a NotFoundError", err)
	}
}
