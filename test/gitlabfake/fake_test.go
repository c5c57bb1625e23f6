package gitlabfake

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-retryablehttp"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// reports collects what the fake reports, to assert on it.
type reports struct {
	mu   sync.Mutex
	msgs []string
}

func (r *reports) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func (r *reports) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func newWorld(t *testing.T, rep Reporter) (*Server, *gitlab.Client, string) {
	t.Helper()
	s := New(rep)
	t.Cleanup(s.Close)
	alice := s.AddUser("alice")
	_, sha := s.CreateProject("acme/app", "main", map[string]string{"app.yaml": "v1\n"}, "alice")
	s.AddGroupMember("acme", "alice", gitlab.MaintainerPermissions)
	c, err := gitlab.NewClient(alice.Token, gitlab.WithBaseURL(s.URL), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	return s, c, sha
}

func post(t *testing.T, c *gitlab.Client, sha string, state gitlab.BuildStateValue, desc string) (string, error) {
	t.Helper()
	st, _, err := c.Commits.SetCommitStatus("acme/app", sha, &gitlab.SetCommitStatusOptions{
		State: state, Name: gitlab.Ptr("sluice/prod/app"), Description: gitlab.Ptr(desc),
	})
	if err != nil {
		return "", err
	}
	return st.Status, nil
}

func TestCommitStatuses_followGitLabsStateMachine(t *testing.T) {
	tests := []struct {
		name    string
		posts   []gitlab.BuildStateValue
		want    []string // the state after each post, or "400" for a refused transition
		entries int      // statuses the commit holds afterwards
	}{
		{"pending then pending is refused", []gitlab.BuildStateValue{gitlab.Pending, gitlab.Pending}, []string{"pending", "400"}, 1},
		{"pending, running, success", []gitlab.BuildStateValue{gitlab.Pending, gitlab.Running, gitlab.Success}, []string{"pending", "running", "success"}, 1},
		{"pending then success directly", []gitlab.BuildStateValue{gitlab.Pending, gitlab.Success}, []string{"pending", "success"}, 1},
		{"running then running is refused", []gitlab.BuildStateValue{gitlab.Running, gitlab.Running}, []string{"running", "400"}, 1},
		{"running then pending is refused", []gitlab.BuildStateValue{gitlab.Running, gitlab.Pending}, []string{"running", "400"}, 1},
		{"a finished status is followed by a new one", []gitlab.BuildStateValue{gitlab.Success, gitlab.Pending, gitlab.Failed}, []string{"success", "pending", "failed"}, 2},
		{"success twice makes two statuses", []gitlab.BuildStateValue{gitlab.Success, gitlab.Success}, []string{"success", "success"}, 2},
		{"canceled from pending", []gitlab.BuildStateValue{gitlab.Pending, gitlab.Canceled}, []string{"pending", "canceled"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, sha := newWorld(t, t)
			for i, state := range tt.posts {
				got, err := post(t, c, sha, state, fmt.Sprintf("post %d", i))
				if err != nil {
					if !gitlab.HasStatusCode(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Cannot transition status via") {
						t.Fatalf("post %d (%s): %v", i, state, err)
					}
					got = "400"
				}
				if got != tt.want[i] {
					t.Fatalf("post %d (%s) = %s, want %s", i, state, got, tt.want[i])
				}
			}
			if n := len(s.Statuses("acme/app", sha)); n != tt.entries {
				t.Fatalf("statuses on the commit = %d, want %d", n, tt.entries)
			}
		})
	}
}

func TestCommitStatuses_refusedPostChangesNothing_andListShowsTheLatest(t *testing.T) {
	s, c, sha := newWorld(t, t)
	if _, err := post(t, c, sha, gitlab.Pending, "step 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := post(t, c, sha, gitlab.Pending, "step 2"); err == nil {
		t.Fatal("pending after pending was accepted")
	}
	if got := s.Statuses("acme/app", sha); got[0].Description != "step 1" || got[0].Ref != "main" {
		t.Fatalf("after a refused post the status is %+v; want it unchanged", got[0])
	}
	if _, err := post(t, c, sha, gitlab.Success, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := post(t, c, sha, gitlab.Failed, "rolled back"); err != nil {
		t.Fatal(err)
	}
	list, _, err := c.Commits.GetCommitStatuses("acme/app", sha, &gitlab.GetCommitStatusesOptions{Name: gitlab.Ptr("sluice/prod/app")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Status != "failed" || list[0].Description != "rolled back" {
		t.Fatalf("latest statuses = %+v; want the failed one only", list)
	}
	all, _, err := c.Commits.GetCommitStatuses("acme/app", sha, &gitlab.GetCommitStatusesOptions{All: gitlab.Ptr(true)})
	if err != nil || len(all) != 2 {
		t.Fatalf("all statuses = %d, %v; want 2", len(all), err)
	}
}

func TestRequests_thatClientGoCannotSendAreReported(t *testing.T) {
	rep := &reports{}
	s, c, sha := newWorld(t, rep)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v4/projects/acme%2Fapp/statuses/"+sha,
		strings.NewReader(`{"state":"pending","colour":"blue"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Private-Token", "glpat-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(rep.all()) != 1 || !strings.Contains(rep.all()[0], "colour") {
		t.Fatalf("unknown body field: status %d, reports %v; want 400 and one report naming it", resp.StatusCode, rep.all())
	}
	// A query parameter client-go's options type does not declare is reported too.
	if _, _, err := c.Commits.GetCommitStatuses("acme/app", sha, nil, func(r *retryablehttp.Request) error {
		q := r.URL.Query()
		q.Set("sort_by", "id")
		r.URL.RawQuery = q.Encode()
		return nil
	}); err == nil || len(rep.all()) != 2 {
		t.Fatalf("unknown query parameter: %v, reports %v; want refused and reported", err, rep.all())
	}
	// What client-go sends is accepted without a report.
	if _, err := post(t, c, sha, gitlab.Pending, "ok"); err != nil || len(rep.all()) != 2 {
		t.Fatalf("client-go's own request: %v, reports %v", err, rep.all())
	}
}

func TestRevert_conflictsAndEmptyRevertsAnswerGitLabsErrorCode(t *testing.T) {
	s, c, first := newWorld(t, t)
	change := s.Push("acme/app", "main", "alice", map[string]string{"app.yaml": "v2\n"}, nil, "Bump to v2")
	if _, _, err := c.Branches.CreateBranch("acme/app", &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("r1"), Ref: gitlab.Ptr("main")}); err != nil {
		t.Fatal(err)
	}
	reverted, _, err := c.Commits.RevertCommit("acme/app", change, &gitlab.RevertCommitOptions{Branch: gitlab.Ptr("r1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CommitFiles("acme/app", reverted.ID)["app.yaml"]; got != "v1\n" || reverted.ParentIDs[0] != change {
		t.Fatalf("revert commit: app.yaml %q, parents %v", got, reverted.ParentIDs)
	}
	// Reverting again on the reverted branch has nothing to do.
	_, _, err = c.Commits.RevertCommit("acme/app", change, &gitlab.RevertCommitOptions{Branch: gitlab.Ptr("r1")})
	var er *gitlab.ErrorResponse
	if !errors.As(err, &er) || !strings.Contains(string(er.Body), `"error_code":"empty"`) {
		t.Fatalf("second revert: %v; want 400 error_code empty", err)
	}
	// A later change to the same file conflicts.
	s.Push("acme/app", "main", "alice", map[string]string{"app.yaml": "v3\n"}, nil, "Bump to v3")
	_, _, err = c.Commits.RevertCommit("acme/app", change, &gitlab.RevertCommitOptions{Branch: gitlab.Ptr("main")})
	if !errors.As(err, &er) || !strings.Contains(string(er.Body), `"error_code":"conflict"`) {
		t.Fatalf("conflicting revert: %v; want 400 error_code conflict", err)
	}
	_ = first
}
