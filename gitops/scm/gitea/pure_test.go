package gitea

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestPlanRevert(t *testing.T) {
	file := func(sha string) entry { return entry{SHA: sha, Mode: modeFile} }
	tests := []struct {
		name                   string
		reverted, parent, head map[string]entry
		wantOps                []fileOp
		wantConflicts          []string
		wantErr                string
	}{{
		name:     "a changed file goes back to the parent's blob",
		reverted: map[string]entry{"a": file("a2"), "b": file("b1")},
		parent:   map[string]entry{"a": file("a1"), "b": file("b1")},
		head:     map[string]entry{"a": file("a2"), "b": file("b1")},
		wantOps:  []fileOp{{Path: "a", Operation: "update", Blob: "a1", Current: "a2"}},
	}, {
		name:     "an added file is deleted, a deleted one re-created",
		reverted: map[string]entry{"new": file("n1")},
		parent:   map[string]entry{"old": file("o1")},
		head:     map[string]entry{"new": file("n1"), "other": file("x")},
		wantOps: []fileOp{
			{Path: "new", Operation: "delete", Current: "n1"},
			{Path: "old", Operation: "create", Blob: "o1"},
		},
	}, {
		name:          "a path the base changed since conflicts",
		reverted:      map[string]entry{"a": file("a2")},
		parent:        map[string]entry{"a": file("a1")},
		head:          map[string]entry{"a": file("a3")},
		wantConflicts: []string{"a"},
	}, {
		name:     "a path already back to the parent's version is left alone",
		reverted: map[string]entry{"a": file("a2"), "b": file("b2")},
		parent:   map[string]entry{"a": file("a1"), "b": file("b1")},
		head:     map[string]entry{"a": file("a1"), "b": file("b2")},
		wantOps:  []fileOp{{Path: "b", Operation: "update", Blob: "b1", Current: "b2"}},
	}, {
		name:     "an executable file keeps its mode through an update",
		reverted: map[string]entry{"run.sh": {SHA: "r2", Mode: modeExecutable}},
		parent:   map[string]entry{"run.sh": {SHA: "r1", Mode: modeExecutable}},
		head:     map[string]entry{"run.sh": {SHA: "r2", Mode: modeExecutable}},
		wantOps:  []fileOp{{Path: "run.sh", Operation: "update", Blob: "r1", Current: "r2"}},
	}, {
		name:     "a mode change cannot be reverted through the file API",
		reverted: map[string]entry{"run.sh": {SHA: "r1", Mode: modeExecutable}},
		parent:   map[string]entry{"run.sh": {SHA: "r1", Mode: modeFile}},
		head:     map[string]entry{"run.sh": {SHA: "r1", Mode: modeExecutable}},
		wantErr:  "changed mode",
	}, {
		name:     "a symbolic link cannot be written",
		reverted: map[string]entry{"link": {SHA: "l2", Mode: "120000"}},
		parent:   map[string]entry{"link": {SHA: "l1", Mode: "120000"}},
		head:     map[string]entry{"link": {SHA: "l2", Mode: "120000"}},
		wantErr:  "symbolic link or submodule",
	}, {
		name:     "a deleted executable cannot be re-created as one",
		reverted: map[string]entry{},
		parent:   map[string]entry{"run.sh": {SHA: "r1", Mode: modeExecutable}},
		head:     map[string]entry{},
		wantErr:  "executable",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, conflicts, err := planRevert(tt.reverted, tt.parent, tt.head)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ops, tt.wantOps) || !reflect.DeepEqual(conflicts, tt.wantConflicts) {
				t.Fatalf("ops = %+v, conflicts = %v; want %+v, %v", ops, conflicts, tt.wantOps, tt.wantConflicts)
			}
		})
	}
}

func TestAttribute(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	events := []labelEvent{
		{ID: 3, Added: true, Label: "sluice/approve", Actor: "bob", At: t0.Add(2 * time.Minute)},
		{ID: 1, Added: true, Label: "sluice/approve", Actor: "alice", At: t0},
		{ID: 2, Added: false, Label: "Sluice/Approve", Actor: "alice", At: t0.Add(time.Minute)},
		// Same second: the id orders them; the removal is last.
		{ID: 4, Added: true, Label: "gone", Actor: "carol", At: t0},
		{ID: 5, Added: false, Label: "gone", Actor: "carol", At: t0},
	}
	got := attribute([]string{"sluice/approve", "gone", "untracked"}, events)
	want := []scm.AppliedLabel{
		{Name: "sluice/approve", AddedBy: "bob", AddedAt: t0.Add(2 * time.Minute)},
		{Name: "gone"},
		{Name: "untracked"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attribute = %+v, want %+v", got, want)
	}
}

func TestRoute(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for path, want := range map[string]string{
		"/api/v1/repos/acme/app/statuses/" + sha:                  "/repos/statuses/{sha}",
		"/gitea/api/v1/repos/acme/app/commits/" + sha + "/status": "/repos/commits/{sha}/status",
		"/api/v1/repos/acme/app/commits/" + sha + "/pull":         "/repos/commits/{sha}/pull",
		"/api/v1/repos/acme/app/issues/42/timeline":               "/repos/issues/{n}/timeline",
		"/api/v1/repos/acme/app/collaborators/bob/permission":     "/repos/collaborators/{name}/permission",
		"/api/v1/orgs/acme/teams/search":                          "/orgs/{name}/teams/search",
		"/api/v1/teams/7/members/bob":                             "/teams/{n}/members/{name}",
		"/api/v1/repos/acme/app/branches/main":                    "/repos/branches/{name}",
		"/api/v1/version":                                         "/version",
	} {
		if got := route(path); got != want {
			t.Errorf("route(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "https://gitea.example.com/", want: "https://gitea.example.com"},
		{in: "https://example.com/gitea", want: "https://example.com/gitea"},
		{in: "http://127.0.0.1:3000/", want: "http://127.0.0.1:3000"},
		{in: "https://gitea.example.com/api/v1/", wantErr: "without /api/v1"},
		{in: "ftp://gitea.example.com/", wantErr: "not an http(s) URL"},
		{in: "", wantErr: "required"},
		{in: "https://gitea.example.com/?x=1", wantErr: "query"},
	}
	for _, tt := range tests {
		got, err := baseURL(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("baseURL(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("baseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// answers is a RoundTripper that answers from a list, for the pure transport tests.
type answers struct {
	sent  int
	reply []func() *http.Response
}

func (a *answers) RoundTrip(*http.Request) (*http.Response, error) {
	r := a.reply[min(a.sent, len(a.reply)-1)]()
	a.sent++
	return r, nil
}

func response(status int, header http.Header) func() *http.Response {
	return func() *http.Response {
		if header == nil {
			header = http.Header{}
		}
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: header, Body: io.NopCloser(strings.NewReader(""))}
	}
}

func TestGate_closesOn429UntilRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	next := &answers{reply: []func() *http.Response{
		response(http.StatusTooManyRequests, http.Header{"Retry-After": {"30"}}),
		response(http.StatusOK, nil),
	}}
	g := &gateTransport{next: next, gate: &gate{}, now: func() time.Time { return now }}
	req, _ := http.NewRequest(http.MethodGet, "http://gitea.test/api/v1/version", http.NoBody)

	_, err := g.RoundTrip(req)
	var rl *scm.RateLimitError
	if !errors.As(err, &rl) || !rl.RetryAt.Equal(now.Add(30*time.Second)) {
		t.Fatalf("429 answer = %v, want a RateLimitError retrying at +30s", err)
	}
	// Nothing is sent before then.
	now = now.Add(29 * time.Second)
	if _, err := g.RoundTrip(req); !errors.As(err, &rl) || next.sent != 1 {
		t.Fatalf("request during the wait = %v (sent %d), want a refusal and nothing sent", err, next.sent)
	}
	now = now.Add(time.Second)
	resp, err := g.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || next.sent != 2 {
		t.Fatalf("request after the wait = %v, %v (sent %d), want it sent", resp, err, next.sent)
	}
}

func TestRetry_repeatsOnlyWhatIsSafe(t *testing.T) {
	for _, tt := range []struct {
		method string
		want   int
	}{{http.MethodGet, 3}, {http.MethodPost, 1}} {
		next := &answers{reply: []func() *http.Response{response(http.StatusBadGateway, nil), response(http.StatusBadGateway, nil), response(http.StatusOK, nil)}}
		rt := &retryTransport{next: next, maxRetries: 3, baseDelay: time.Millisecond, maxDelay: time.Millisecond}
		req, _ := http.NewRequest(tt.method, "http://gitea.test/api/v1/x", http.NoBody)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if next.sent != tt.want {
			t.Errorf("%s through two 502s: sent %d times, want %d", tt.method, next.sent, tt.want)
		}
	}
}
