package gitopsgitea

import (
	"fmt"
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story: on Gitea, Bob's pull request gets one comment from sluice when its release pauses at
// step 1, saying so and how to go on. Alice's label approves step 1, and the same comment,
// edited in place, says step 2 paused and that Alice approved step 1; her promote-full ends
// the release and the comment says it was released. Bob's own comment stays as he wrote it.
func TestGitGate_onGitea_stickyCommentEditedInPlaceAcrossSteps(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-comment", labels: []string{"sluice/approve", "sluice/promote-full"}})
	if _, err := s.repo.Comment(ctx, suite.bob, s.pr.Index, "Bumped for the spring sale."); err != nil {
		t.Fatal(err)
	}
	first := waitComment(t, s, "Step 1/3 paused", "| ▶ | **1** | 1 |", "`sluice/approve`", "`/sluice approve`")

	gitopsstory.AfterPause(t, s.paused)
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	second := stage.WaitStep(t, s.ns, 2)
	edited := waitComment(t, s, "Step 2/3 paused", "| ✓ | 1 |", "| ▶ | **2** |", "step 1 approved by **alice** via gitea-label")
	if edited.ID != first.ID {
		t.Fatalf("comment %d at step 2, want comment %d edited in place", edited.ID, first.ID)
	}

	gitopsstory.AfterPause(t, second)
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/promote-full"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "success", "released: 3/3 steps done")
	done := waitComment(t, s, "Released: 3/3 steps done", "every remaining step approved by **alice** via gitea-label")
	if done.ID != first.ID {
		t.Fatalf("comment %d at the end, want comment %d edited in place", done.ID, first.ID)
	}
}

// waitComment waits until the pull request holds Bob's comment and exactly one of sluice's,
// for checkout, containing every text, and returns sluice's.
func waitComment(t *testing.T, s *shop, texts ...string) *sdk.Comment {
	t.Helper()
	var mine *sdk.Comment
	poll.Until(t, fmt.Sprintf("sluice's comment saying %q", texts), func() (bool, string) {
		list, err := comments(t, s.repo, s.pr.Index)
		if err != nil {
			return false, err.Error()
		}
		var sluice []*sdk.Comment
		bobs := 0
		for _, c := range list {
			switch {
			case c.Poster.UserName == "sluice-bot" && strings.Contains(c.Body, scm.CommentMarker(s.ns+"/checkout")):
				sluice = append(sluice, c)
			case c.Poster.UserName == "bob" && c.Body == "Bumped for the spring sale.":
				bobs++
			}
		}
		if len(sluice) != 1 || bobs != 1 || len(list) != 2 {
			return false, fmt.Sprintf("%d comments, %d of them sluice's, %d Bob's untouched", len(list), len(sluice), bobs)
		}
		mine = sluice[0]
		for _, text := range texts {
			if !strings.Contains(mine.Body, text) {
				return false, mine.Body
			}
		}
		return true, ""
	})
	return mine
}

func comments(t *testing.T, repo *giteatest.Repo, index int64) ([]*sdk.Comment, error) {
	api, err := suite.alice.API(poll.Context(t))
	if err != nil {
		return nil, err
	}
	list, _, err := api.ListIssueComments(repo.Owner, repo.Name, index, sdk.ListIssueCommentOptions{})
	return list, err
}
