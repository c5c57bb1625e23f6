package gitea

import (
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// On a real Gitea, one sticky comment per key on a pull request: created once, edited in
// place when its text changes, not written when it does not, found again by a client started
// afresh; a comment by someone else carrying the marker is left alone.
func TestUpsertComment_stickyCommentOnRealGitea(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	pr := mergedChange(t, repo, co, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2\n"}, Message: "Ship v2"}, sdk.MergeStyleMerge)
	_, err = repo.Comment(ctx, world.bob, pr.Index, "faked\n\n"+scm.CommentMarker("prod/checkout"))
	check(t, err)
	obs := newCountingObserver()
	c := newClient(t, repo, Options{Observer: obs})
	upsert := func(c *Client, body string, wantPosted bool) {
		t.Helper()
		posted, err := c.UpsertComment(ctx, int(pr.Index), "prod/checkout", body)
		check(t, err)
		if posted != wantPosted {
			t.Fatalf("UpsertComment(%q) posted = %v, want %v", body, posted, wantPosted)
		}
	}
	upsert(c, "step 1/3 paused", true)
	upsert(c, "step 1/3 paused", false)
	upsert(c, "step 2/3 paused", true)
	upsert(newClient(t, repo, Options{}), "step 2/3 paused", false)
	upsert(newClient(t, repo, Options{}), "step 3/3 released", true)

	api, err := world.alice.API(ctx)
	check(t, err)
	list, _, err := api.ListIssueComments(repo.Owner, repo.Name, pr.Index, sdk.ListIssueCommentOptions{})
	check(t, err)
	if len(list) != 2 || list[0].Poster.UserName != "bob" || !strings.HasPrefix(list[0].Body, "faked") {
		t.Fatalf("comments = %d, want bob's untouched and sluice's", len(list))
	}
	mine := list[1]
	if mine.Poster.UserName != "sluice-bot" || !strings.HasPrefix(mine.Body, "step 3/3 released") || !strings.Contains(mine.Body, scm.CommentMarker("prod/checkout")) {
		t.Fatalf("sluice's comment = %q by %s, want step 3/3 released by sluice-bot", mine.Body, mine.Poster.UserName)
	}
	if n := obs.count("POST /repos/issues/{n}/comments 201"); n != 1 {
		t.Fatalf("comments created by the first client = %d, want 1 (%v)", n, obs.requests)
	}
}
