package gitea

import (
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// Given a pull request by bob on a real Gitea, with a conversation and reviews
// When the gate reads its comments, reviews and the authors of its commits
// Then it gets the plain comments (edited ones with their new body and edit time, none of
// Gitea's own timeline entries), the approving, changes-requested and dismissed reviews (not
// the comment-only one), and bob's commit linked to his account; and once merged, Gitea
// refuses an approving review, as docs/gitops.md says.
func TestConversation_commentsReviewsAndCommitAuthors(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	head, err := co.CommitAndPush(ctx, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2\n"}, Message: "Ship v2"})
	check(t, err)
	pr, err := repo.OpenPullRequest(ctx, world.bob, "v2", repo.DefaultBranch, "Ship v2")
	check(t, err)
	check(t, repo.EnsureLabels(ctx, world.alice, "sluice/approve"))
	check(t, repo.AddLabels(ctx, world.alice, pr.Index, "sluice/approve")) // a timeline entry, not a comment
	c := newClient(t, repo, Options{})

	// Comments: alice writes and edits one; carol writes one.
	first, err := repo.Comment(ctx, world.alice, pr.Index, "LGTM")
	check(t, err)
	_, err = repo.Comment(ctx, world.carol, pr.Index, "/sluice approve")
	check(t, err)
	_, err = repo.EditComment(ctx, world.alice, first.ID, "LGTM\n/sluice approve step=2")
	check(t, err)
	comments, err := c.Comments(ctx, int(pr.Index))
	check(t, err)
	if len(comments) != 2 {
		t.Fatalf("comments = %+v, want alice's and carol's", comments)
	}
	if a := comments[0]; a.ID != first.ID || a.Author != "alice" || a.Body != "LGTM\n/sluice approve step=2" || a.CreatedAt.IsZero() || a.UpdatedAt.Before(a.CreatedAt) {
		t.Errorf("alice's comment = %+v", a)
	}
	if b := comments[1]; b.Author != "carol" || b.Body != "/sluice approve" || b.UpdatedAt.IsZero() {
		t.Errorf("carol's comment = %+v", b)
	}

	// Reviews: alice approves, sluice-bot comments, carol requests changes, alice's approval is
	// dismissed and she approves again.
	approved, err := repo.Review(ctx, world.alice, pr.Index, sdk.ReviewStateApproved, "")
	check(t, err)
	_, err = repo.Review(ctx, world.sluice, pr.Index, sdk.ReviewStateComment, "a nit")
	check(t, err)
	_, err = repo.Review(ctx, world.carol, pr.Index, sdk.ReviewStateRequestChanges, "not yet")
	check(t, err)
	check(t, repo.DismissReview(ctx, world.alice, pr.Index, approved.ID, "stale"))
	_, err = repo.Review(ctx, world.alice, pr.Index, sdk.ReviewStateApproved, "now")
	check(t, err)
	reviews, err := c.Reviews(ctx, int(pr.Index))
	check(t, err)
	var got []string
	for _, r := range reviews {
		got = append(got, r.Author+" "+string(r.State))
		if r.ID == 0 || r.SubmittedAt.IsZero() || r.CommitID != head {
			t.Errorf("review %+v lacks its id, time or commit %s", r, head)
		}
	}
	if w := "alice dismissed, carol changes_requested, alice approved"; strings.Join(got, ", ") != w {
		t.Errorf("reviews = %s, want %s", strings.Join(got, ", "), w)
	}

	// Commits: bob's, linked to his account.
	commits, err := c.PullRequestCommits(ctx, int(pr.Index))
	check(t, err)
	if len(commits) != 1 || commits[0] != (scm.CommitAuthor{SHA: head, Login: "bob", Email: world.bob.Email, Name: commits[0].Name}) {
		t.Errorf("commits = %+v, want %s by bob <%s>", commits, head, world.bob.Email)
	}

	// Once merged, Gitea refuses an approving review.
	_, err = repo.MergePullRequest(ctx, world.alice, pr.Index, sdk.MergeStyleMerge)
	check(t, err)
	if _, err := repo.Review(ctx, world.sluice, pr.Index, sdk.ReviewStateApproved, ""); err == nil {
		t.Error("Gitea accepted an approving review of a merged pull request")
	}
}

// Given a pull request that does not exist
// When the gate reads its comments and reviews
// Then it gets an error: for the reviews a scm.NotFoundError; for the comments whatever Gitea
// answers (Gitea 1.26 answers 500 with an empty message).
func TestConversation_unknownPullRequestIsNotFound(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t, newRepo(t), Options{MaxRetries: -1})
	if _, err := c.Comments(ctx, 99); err == nil {
		t.Error("comments of a missing pull request: no error")
	}
	if _, err := c.Reviews(ctx, 99); !scm.IsNotFound(err) {
		t.Errorf("reviews error = %v, want a NotFoundError", err)
	}
}
