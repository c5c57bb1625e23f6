package gitea

import (
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"
)

// Reverting a merged pull request undoes its changes under directories:
// the modified file gets its content back, the added one goes, the message
// is git revert's.
func TestCheckout_Revert_undoesAMergeUnderDirectories(t *testing.T) {
	ctx := testContext(t)
	s := server
	dana, err := s.CreateUser(ctx, "dana")
	check(t, err)
	repo, err := s.CreateRepo(ctx, dana, "", "reverts")
	check(t, err)
	co, err := repo.Clone(ctx, dana)
	check(t, err)
	_, err = co.CommitAndPush(ctx, "main", Change{Message: "Add app", Write: map[string]string{"deploy/app.yaml": "image: app:v1\n"}})
	check(t, err)
	_, err = co.CommitAndPush(ctx, "bump", Change{Message: "Bump app", Write: map[string]string{"deploy/app.yaml": "image: app:v2\n", "deploy/extra.yaml": "x: 1\n"}})
	check(t, err)
	pr, err := repo.OpenPullRequest(ctx, dana, "bump", "main", "Bump app")
	check(t, err)
	merged, err := repo.MergePullRequest(ctx, dana, pr.Index, sdk.MergeStyleMerge)
	check(t, err)

	revert, err := co.Revert(ctx, "main", *merged.MergedCommitID)
	check(t, err)

	api, err := dana.API(ctx)
	check(t, err)
	content, _, err := api.GetFile(repo.Owner, repo.Name, revert, "deploy/app.yaml")
	check(t, err)
	if string(content) != "image: app:v1\n" {
		t.Errorf("deploy/app.yaml after the revert = %q, want v1's", content)
	}
	if _, _, err := api.GetFile(repo.Owner, repo.Name, revert, "deploy/extra.yaml"); err == nil {
		t.Errorf("deploy/extra.yaml still there after the revert")
	}
	commit, _, err := api.GetSingleCommit(repo.Owner, repo.Name, revert)
	check(t, err)
	if want := "This reverts commit " + *merged.MergedCommitID + ", reversing\nchanges made to "; commit.RepoCommit == nil || !strings.Contains(commit.RepoCommit.Message, want) {
		t.Errorf("revert message %+v does not say %q", commit.RepoCommit, want)
	}
}
