package gitlab

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestPlan_takesGitLabsStateMachineToTheWantedStatus(t *testing.T) {
	want := func(state scm.CommitState, desc string) scm.CommitStatus {
		return scm.CommitStatus{Context: "sluice/x", State: state, Description: desc, TargetURL: "u"}
	}
	at := func(state gl.BuildStateValue, desc string) shown {
		return shown{state: state, description: desc, targetURL: "u", ref: "main", pipelineID: 7}
	}
	tests := []struct {
		name  string
		cur   shown
		known bool
		want  scm.CommitStatus
		steps []gl.BuildStateValue
	}{
		{"nothing yet, in progress", shown{}, false, want(scm.StatePending, "a"), []gl.BuildStateValue{gl.Running}},
		{"nothing yet, completed", shown{}, false, want(scm.StateSuccess, "a"), []gl.BuildStateValue{gl.Success}},
		{"nothing yet, rolled back", shown{}, false, want(scm.StateFailure, "a"), []gl.BuildStateValue{gl.Failed}},
		{"nothing yet, error", shown{}, false, want(scm.StateError, "a"), []gl.BuildStateValue{gl.Failed}},
		{"running, same", at(gl.Running, "a"), true, want(scm.StatePending, "a"), nil},
		{"running, new description restarts it", at(gl.Running, "a"), true, want(scm.StatePending, "b"), []gl.BuildStateValue{gl.Canceled, gl.Running}},
		{"running, new target URL restarts it", shown{state: gl.Running, description: "a", targetURL: "old"}, true, want(scm.StatePending, "a"),
			[]gl.BuildStateValue{gl.Canceled, gl.Running}},
		{"running to success", at(gl.Running, "a"), true, want(scm.StateSuccess, "b"), []gl.BuildStateValue{gl.Success}},
		{"running to failure", at(gl.Running, "a"), true, want(scm.StateFailure, "b"), []gl.BuildStateValue{gl.Failed}},
		{"pending (an older sluice's) in progress runs", at(gl.Pending, "a"), true, want(scm.StatePending, "a"), []gl.BuildStateValue{gl.Running}},
		{"pending, new description runs", at(gl.Pending, "a"), true, want(scm.StatePending, "b"), []gl.BuildStateValue{gl.Running}},
		{"pending to success goes through running", at(gl.Pending, "a"), true, want(scm.StateSuccess, "b"), []gl.BuildStateValue{gl.Running, gl.Success}},
		{"pending to failure goes through running", at(gl.Pending, "a"), true, want(scm.StateFailure, "b"), []gl.BuildStateValue{gl.Running, gl.Failed}},
		{"success, same", at(gl.Success, "a"), true, want(scm.StateSuccess, "a"), nil},
		{"success, new description starts a new status", at(gl.Success, "a"), true, want(scm.StateSuccess, "b"), []gl.BuildStateValue{gl.Success}},
		{"success, then in progress again", at(gl.Success, "a"), true, want(scm.StatePending, "a"), []gl.BuildStateValue{gl.Running}},
		{"failed, then completed", at(gl.Failed, "a"), true, want(scm.StateSuccess, "a"), []gl.BuildStateValue{gl.Success}},
		{"canceled by someone, in progress", at(gl.Canceled, "a"), true, want(scm.StatePending, "a"), []gl.BuildStateValue{gl.Running}},
		{"failed reads as failure and error alike", at(gl.Failed, "a"), true, want(scm.StateError, "a"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plan(tt.cur, tt.known, tt.want); !reflect.DeepEqual(got, tt.steps) {
				t.Fatalf("plan = %v, want %v", got, tt.steps)
			}
		})
	}
}

func TestPermissionOf_mapsAccessLevels(t *testing.T) {
	tests := []struct {
		level gl.AccessLevelValue
		want  scm.Permission
	}{
		{gl.NoPermissions, scm.PermissionNone},
		{gl.MinimalAccessPermissions, scm.PermissionNone},
		{gl.GuestPermissions, scm.PermissionRead},
		{gl.PlannerPermissions, scm.PermissionRead},
		{gl.ReporterPermissions, scm.PermissionTriage},
		{25, scm.PermissionTriage},
		{gl.DeveloperPermissions, scm.PermissionWrite},
		{gl.MaintainerPermissions, scm.PermissionMaintain},
		{gl.OwnerPermissions, scm.PermissionAdmin},
		{gl.AdminPermissions, scm.PermissionAdmin},
	}
	for _, tt := range tests {
		if got := permissionOf(tt.level); got != tt.want {
			t.Errorf("permissionOf(%d) = %s, want %s", tt.level, got, tt.want)
		}
	}
}

func TestPullRequest_mapsMergeRequests(t *testing.T) {
	head, merge, squash := "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	tests := []struct {
		name      string
		mr        gl.BasicMergeRequest
		state     string
		merged    bool
		mergeSHA  string
		wantLabel []string
	}{
		{"open", gl.BasicMergeRequest{State: "opened", SHA: head, Labels: gl.Labels{"a", "b"}}, "open", false, "", []string{"a", "b"}},
		{"locked reads as open", gl.BasicMergeRequest{State: "locked", SHA: head}, "open", false, "", nil},
		{"closed", gl.BasicMergeRequest{State: "closed", SHA: head}, "closed", false, "", nil},
		{"merged with a merge commit", gl.BasicMergeRequest{State: "merged", SHA: head, MergeCommitSHA: merge, SquashCommitSHA: squash}, "closed", true, merge, nil},
		{"squashed", gl.BasicMergeRequest{State: "merged", SHA: head, SquashCommitSHA: squash}, "closed", true, squash, nil},
		{"fast-forwarded", gl.BasicMergeRequest{State: "merged", SHA: head}, "closed", true, head, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.mr.IID, tt.mr.Author = 7, &gl.BasicUser{Username: "bob"}
			got := pullRequest(&tt.mr)
			if got.Number != 7 || got.State != tt.state || got.Merged != tt.merged || got.MergeCommitSHA != tt.mergeSHA ||
				got.HeadSHA != head || got.Author != "bob" || !reflect.DeepEqual(got.Labels, tt.wantLabel) {
				t.Fatalf("pullRequest = %+v", got)
			}
		})
	}
}

func TestAttribute_replaysLabelEventsInOrder(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []labelEvent{
		{ID: 3, Added: true, Label: "approve", Actor: "carol", At: t0.Add(2 * time.Minute)},
		{ID: 1, Added: true, Label: "approve", Actor: "alice", At: t0},
		{ID: 2, Added: false, Label: "APPROVE", Actor: "bob", At: t0.Add(time.Minute)},
		{ID: 5, Added: true, Label: "hold", Actor: "dave", At: t0.Add(3 * time.Minute)},
		{ID: 4, Added: true, Label: "hold", Actor: "erin", At: t0.Add(3 * time.Minute)},
	}
	got := attribute([]string{"Approve", "hold", "orphan"}, events)
	want := []scm.AppliedLabel{
		{Name: "Approve", AddedBy: "carol", AddedAt: t0.Add(2 * time.Minute)},
		{Name: "hold", AddedBy: "dave", AddedAt: t0.Add(3 * time.Minute)},
		{Name: "orphan"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attribute = %+v\nwant      %+v", got, want)
	}
}

func TestRoute_boundsTheOperationsObserved(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for path, want := range map[string]string{
		"/api/v4/projects/acme%2Fapp/statuses/" + sha:                         "/projects/{id}/statuses/{sha}",
		"/gitlab/api/v4/projects/acme%2Fsub%2Fapp/merge_requests/12":          "/projects/{id}/merge_requests/{n}",
		"/api/v4/projects/5/members/all/42":                                   "/projects/{id}/members/all/{n}",
		"/api/v4/groups/acme%2Fplatform/members/all/42":                       "/groups/{id}/members/all/{n}",
		"/api/v4/projects/acme%2Fapp/repository/branches/sluice%2Frevert-abc": "/projects/{id}/repository/branches/{name}",
		"/api/v4/users": "/users",
	} {
		if got := route(path); got != want {
			t.Errorf("route(%s) = %s, want %s", path, got, want)
		}
	}
}

func TestOptions_areChecked(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"gitlab.com", Options{Project: "acme/app", BaseURL: "https://gitlab.com", Token: "t"}, true},
		{"a subgroup on a path", Options{Project: "acme/platform/app", BaseURL: "https://git.example.com/gitlab/", Token: "t"}, true},
		{"no namespace", Options{Project: "app", BaseURL: "https://gitlab.com", Token: "t"}, false},
		{"an empty segment", Options{Project: "acme//app", BaseURL: "https://gitlab.com", Token: "t"}, false},
		{"the API path", Options{Project: "acme/app", BaseURL: "https://gitlab.com/api/v4", Token: "t"}, false},
		{"not http", Options{Project: "acme/app", BaseURL: "ftp://gitlab.com", Token: "t"}, false},
		{"no token", Options{Project: "acme/app", BaseURL: "https://gitlab.com"}, false},
	} {
		if _, err := New(tt.opts); (err == nil) != tt.ok {
			t.Errorf("%s: New = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestRateLimitHeaders_areRead(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	resp := func(status int, h map[string]string) *http.Response {
		r := &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{}}
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	reset := now.Add(40 * time.Second)
	resetHeader := map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "1893456040"}
	tests := []struct {
		name      string
		resp      *http.Response
		limited   bool
		at        time.Time
		secondary bool
	}{
		{"429 with Retry-After", resp(429, map[string]string{"Retry-After": "30"}), true, now.Add(30 * time.Second), true},
		{"429 with a budget", resp(429, resetHeader), true, reset, false},
		{"429 with neither", resp(429, nil), true, now.Add(defaultLimitWait), true},
		{"403 is not a rate limit", resp(403, nil), false, time.Time{}, false},
	}
	for _, tt := range tests {
		l, ok := limitFrom(tt.resp, now)
		if ok != tt.limited || ok && (!l.RetryAt.Equal(tt.at) || l.Secondary != tt.secondary) {
			t.Errorf("%s: limitFrom = %+v, %v", tt.name, l, ok)
		}
	}
	if until, ok := exhaustedUntil(resp(200, resetHeader), now); !ok || !until.Equal(reset) {
		t.Errorf("exhaustedUntil = %v, %v; want %v", until, ok, reset)
	}
	if _, ok := exhaustedUntil(resp(200, map[string]string{"RateLimit-Remaining": "3"}), now); ok {
		t.Error("a budget with requests left closed the gate")
	}
}
