package gitopsworld

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/test/gitlabfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

func newGitLabProject(t *testing.T) (GitLabProject, *gitlab.Client) {
	t.Helper()
	git, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = git.Close() })
	gl := gitlabfake.New(t)
	t.Cleanup(gl.Close)
	for _, u := range []string{"lead", "dev"} {
		gl.AddUser(u)
	}
	gl.CreateProject("acme/shop", "main", map[string]string{"README.md": "shop\n"}, "lead")
	gl.AddGroupMember("acme", "lead", gitlab.MaintainerPermissions)
	gl.AddGroupMember("acme", "dev", gitlab.DeveloperPermissions)
	repo, err := git.CreateRepo("shop.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	p := GitLabProject{Git: repo, GitLab: gl, Path: "acme/shop"}
	if _, err := p.Commit("main", "Add app", "lead", map[string]string{"apps/app.yaml": "image: v1\n"}); err != nil {
		t.Fatal(err)
	}
	c, err := gitlab.NewClient("glpat-lead", gitlab.WithBaseURL(gl.URL), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// A merged merge request and its revert are the same commits in Git and on
// GitLab: GitLab relates the merge request to its merge commit and to the
// commit it brought, takes statuses on both, and its revert API undoes the
// merge with the files Git has.
func TestGitLabProject_mergeAndRevert_lineUpGitAndGitLab(t *testing.T) {
	p, c := newGitLabProject(t)
	mr, err := p.OpenMergeRequest("Bump app to v2", "dev", map[string]string{"apps/app.yaml": "image: v2\n"})
	if err != nil {
		t.Fatal(err)
	}
	merge, err := p.Merge(mr, "lead")
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := p.Git.Head("main"); head != merge || p.GitLab.BranchHead("acme/shop", "main") != merge {
		t.Fatalf("main is %s in Git and %s on GitLab, want the merge %s", head, p.GitLab.BranchHead("acme/shop", "main"), merge)
	}
	branchHead, _ := p.Git.Head(mr.Branch)
	for _, sha := range []string{merge, branchHead} {
		list, _, err := c.Commits.ListMergeRequestsByCommit("acme/shop", sha)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].IID != mr.IID || list[0].State != "merged" || list[0].MergeCommitSHA != merge || list[0].SHA != branchHead {
			t.Fatalf("merge requests of %s = %+v, want !%d merged as %s", sha[:12], list, mr.IID, merge)
		}
	}
	commits, _, err := c.MergeRequests.GetMergeRequestCommits("acme/shop", mr.IID, nil)
	if err != nil || len(commits) != 1 || commits[0].ID != branchHead || commits[0].AuthorEmail != "dev@example.com" {
		t.Fatalf("commits of !%d = %+v, %v; want dev's %s", mr.IID, commits, err, branchHead)
	}
	if _, _, err := c.Commits.SetCommitStatus("acme/shop", merge, &gitlab.SetCommitStatusOptions{State: gitlab.Pending, Name: gitlab.Ptr("sluice")}); err != nil {
		t.Fatalf("a status on the mirrored merge: %v", err)
	}

	// GitLab's revert API reverts the mirrored merge against its first parent.
	if _, _, err := c.Branches.CreateBranch("acme/shop", &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("revert"), Ref: gitlab.Ptr("main")}); err != nil {
		t.Fatal(err)
	}
	reverted, _, err := c.Commits.RevertCommit("acme/shop", merge, &gitlab.RevertCommitOptions{Branch: gitlab.Ptr("revert")})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.GitLab.CommitFiles("acme/shop", reverted.ID)["apps/app.yaml"]; got != "image: v1\n" {
		t.Errorf("GitLab's revert has apps/app.yaml %q, want v1's", got)
	}

	// A revert in Git is mirrored with git's message.
	revert, err := p.Revert(merge, "lead")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Commits.GetCommit("acme/shop", revert, nil)
	if err != nil || !strings.Contains(got.Message, "This reverts commit "+merge) || got.ParentIDs[0] != merge {
		t.Fatalf("GitLab's copy of the revert: %+v, %v", got, err)
	}
}

// A push to the source branch of an open merge request updates it, as
// GitLab does: its head moves, a system note says so, and the webhooks hear
// of the push and of the update.
func TestGitLabProject_pushToAMergeRequestsBranch_updatesIt(t *testing.T) {
	p, _ := newGitLabProject(t)
	mr, err := p.OpenMergeRequest("Bump app to v2", "dev", map[string]string{"apps/app.yaml": "image: v2\n"})
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(hook.Close)
	p.GitLab.AddHook("acme/shop", hook.URL, "secret")
	head, err := p.Commit(mr.Branch, "Fix the tag", "dev", map[string]string{"apps/app.yaml": "image: v2.1\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.GitLab.MergeRequests("acme/shop") {
		if m.IID == mr.IID && m.Head != head {
			t.Fatalf("!%d's head is %s, want %s", mr.IID, m.Head, head)
		}
	}
	notes := p.GitLab.Notes("acme/shop", mr.IID)
	if len(notes) != 1 || !notes[0].System || notes[0].Body != "added 1 commit" {
		t.Fatalf("notes of !%d = %+v, want GitLab's system note of the push", mr.IID, notes)
	}
	var events []string
	for _, d := range p.GitLab.Deliveries() {
		events = append(events, d.Event)
	}
	if strings.Join(events, ",") != gitlabfake.EventPush+","+gitlabfake.EventMergeRequest {
		t.Errorf("deliveries %q, want the push and the merge request's update", events)
	}
	if again, err := p.Push(mr.Branch, "dev"); err != nil || again != head || len(p.GitLab.Notes("acme/shop", mr.IID)) != 1 {
		t.Fatalf("pushing nothing new: %s, %v, %d notes; want no change", again, err, len(p.GitLab.Notes("acme/shop", mr.IID)))
	}
}
