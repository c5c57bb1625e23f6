package gitopsgitlab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/gitlabfake"
	"github.com/sluice-dev/sluice/test/poll"
)

// What the stories read back from the fake GitLab, as GitLab holds it.

// statusName is the name (context) of the Rollout's commit status in ns.
func statusName(ns string) string { return "sluice/" + ns + "/checkout" }

// statuses lists the Rollout's commit statuses on sha, oldest first: GitLab
// keeps a finished status and starts a new one on the next post.
func statuses(s *shop, sha string) []gitlabfake.Status {
	var out []gitlabfake.Status
	for _, st := range s.gl.Statuses(project, sha) {
		if st.Name == statusName(s.ns) {
			out = append(out, st)
		}
	}
	return out
}

// latest is the newest of the Rollout's statuses on sha, the one GitLab
// shows (zero when there is none).
func latest(s *shop, sha string) gitlabfake.Status {
	list := statuses(s, sha)
	if len(list) == 0 {
		return gitlabfake.Status{}
	}
	return list[len(list)-1]
}

// waitStatus waits until the newest of the Rollout's statuses on sha is in
// GitLab's state with description.
func waitStatus(t *testing.T, s *shop, sha, state, description string) gitlabfake.Status {
	t.Helper()
	var st gitlabfake.Status
	poll.Until(t, fmt.Sprintf("status %s %q on %s", state, description, sha[:12]), func() (bool, string) {
		st = latest(s, sha)
		return st.State == state && st.Description == description, fmt.Sprintf("%+v", statuses(s, sha))
	})
	return st
}

// assertRestartsOnly checks that every status of the Rollout on sha but the
// newest was canceled: each new description of a release in progress
// restarted the running status (GitLab refuses running→running), and
// nothing else was left behind.
func assertRestartsOnly(t *testing.T, s *shop, sha string) {
	t.Helper()
	list := statuses(s, sha)
	for _, st := range list[:max(len(list)-1, 0)] {
		if st.State != "canceled" {
			t.Fatalf("statuses on %s = %+v, want every one but the newest canceled by a restart", sha[:12], list)
		}
	}
}

// assertNoRefusedStatus fails the story when GitLab refused a commit status
// sluice posted: a transition its state machine does not have
// (running→running, pending→pending), or any other error.
func assertNoRefusedStatus(t *testing.T, gl *gitlabfake.Server) {
	t.Helper()
	for _, r := range gl.Requests() {
		if r.Route == "POST /projects/:id/statuses/:sha" && r.Status >= 300 {
			t.Errorf("GitLab answered %d to the status post %s %s", r.Status, r.Method, r.Path)
		}
	}
}

// waitNote waits until the merge request holds exactly one note of sluice's
// for the Rollout, containing every text, and returns it.
func waitNote(t *testing.T, s *shop, texts ...string) gitlabfake.Note {
	t.Helper()
	var mine gitlabfake.Note
	marker := scm.CommentMarker(s.ns + "/checkout")
	poll.Until(t, fmt.Sprintf("sluice's note saying %q", texts), func() (bool, string) {
		var found []gitlabfake.Note
		for _, n := range s.gl.Notes(project, s.mr.IID) {
			if n.Author == botUser && strings.Contains(n.Body, marker) {
				found = append(found, n)
			}
		}
		if len(found) != 1 {
			return false, fmt.Sprintf("%d notes of sluice's", len(found))
		}
		mine = found[0]
		for _, text := range texts {
			if !strings.Contains(mine.Body, text) {
				return false, mine.Body
			}
		}
		return true, ""
	})
	return mine
}

// waitRevertProposal waits for the open merge request into main that
// sluice (its bot) opened to revert sha.
func waitRevertProposal(t *testing.T, s *shop, sha string) gitlabfake.MergeRequest {
	t.Helper()
	var found gitlabfake.MergeRequest
	poll.Until(t, "a merge request reverting "+sha[:12], func() (bool, string) {
		var seen []string
		for _, mr := range s.gl.MergeRequests(project) {
			if mr.State == "opened" && mr.TargetBranch == "main" && mr.Author == botUser && strings.Contains(mr.Description, sha) {
				found = mr
				return true, ""
			}
			seen = append(seen, fmt.Sprintf("!%d %s %q", mr.IID, mr.State, mr.Title))
		}
		return false, strings.Join(seen, "; ")
	})
	return found
}
