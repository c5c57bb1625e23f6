package gitlabfake

import (
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// A merge mirrored from Git is the merge request's merge commit when it has the merge request's
// head as a second parent, its squash commit when it is another commit, and nothing but its head
// when the target was fast-forwarded to it: GitLab relates the merge request to that commit.
func TestMirrorMerge_relatesTheMergeRequestToTheMirroredCommit(t *testing.T) {
	when := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	author := Signature{Name: "dev", Email: "dev@example.com", When: when}
	sha := func(c byte) string {
		b := make([]byte, 40)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	tests := []struct {
		name       string
		merged     Commit // the commit main moves to; the branch's head is sha('b')
		wantMerge  string
		wantSquash string
		wantMerged string // the commit sluice reads as the merge (MergeCommitSHA, else SquashCommitSHA, else SHA)
	}{
		{"merge commit", Commit{SHA: sha('c'), Parents: []string{sha('a'), sha('b')}, Files: map[string]string{"app.yaml": "v2\n"}, Message: "Merge", Author: author},
			sha('c'), "", sha('c')},
		{"squash", Commit{SHA: sha('d'), Parents: []string{sha('a')}, Files: map[string]string{"app.yaml": "v2\n"}, Message: "Bump", Author: author},
			"", sha('d'), sha('d')},
		{"fast-forward", Commit{SHA: sha('b')}, "", "", sha('b')},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, _ := newWorld(t, t)
			s.AddUser("dev")
			s.AddGroupMember("acme", "dev", gitlab.DeveloperPermissions)
			base := Commit{SHA: sha('a'), Files: map[string]string{"app.yaml": "v1\n"}, Message: "Add app", Author: author}
			head := Commit{SHA: sha('b'), Parents: []string{sha('a')}, Files: map[string]string{"app.yaml": "v2\n"}, Message: "Bump", Author: author}
			s.MirrorPush("acme/app", "main", "dev", []Commit{base})
			s.MirrorPush("acme/app", "bump", "dev", []Commit{base, head})
			iid := s.OpenMergeRequest("acme/app", "dev", "bump", "main", "Bump")
			s.MirrorPush("acme/app", "main", "dev", []Commit{tt.merged})
			s.MirrorMerge("acme/app", iid, tt.merged.SHA, "alice")
			list, _, err := c.Commits.ListMergeRequestsByCommit("acme/app", tt.wantMerged)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].IID != iid || list[0].State != "merged" || list[0].MergeCommitSHA != tt.wantMerge ||
				list[0].SquashCommitSHA != tt.wantSquash || list[0].SHA != sha('b') {
				t.Fatalf("merge requests of %s = %+v, want !%d merged with merge %q, squash %q", tt.wantMerged[:8], list, iid, tt.wantMerge, tt.wantSquash)
			}
			if !s.HasCommit("acme/app", tt.merged.SHA) || s.BranchHead("acme/app", "main") != tt.merged.SHA {
				t.Fatalf("main is at %s, want the mirrored %s", s.BranchHead("acme/app", "main"), tt.merged.SHA)
			}
		})
	}
}
