package github

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestLimitFrom(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	reset := strconv.FormatInt(now.Add(30*time.Minute).Unix(), 10)
	tests := []struct {
		name          string
		status        int
		header        map[string]string
		message       string
		streak        int
		wantLimited   bool
		wantAt        time.Time
		wantSecondary bool
	}{
		{name: "200 is no limit", status: 200, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}},
		{name: "plain 403 is a permission error", status: 403, message: "Resource not accessible by integration", header: map[string]string{"X-Ratelimit-Remaining": "4000"}},
		{name: "403 primary", status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}, wantLimited: true, wantAt: now.Add(30 * time.Minute)},
		{name: "429 primary", status: 429, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}, wantLimited: true, wantAt: now.Add(30 * time.Minute)},
		{name: "primary reset in the past waits a second", status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1"}, wantLimited: true, wantAt: now.Add(time.Second)},
		{name: "retry-after seconds wins", status: 429, header: map[string]string{"Retry-After": "42", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}, wantLimited: true, wantAt: now.Add(42 * time.Second), wantSecondary: true},
		{name: "retry-after date", status: 403, header: map[string]string{"Retry-After": now.Add(2 * time.Minute).Format(http.TimeFormat)}, wantLimited: true, wantAt: now.Add(2 * time.Minute), wantSecondary: true},
		{name: "secondary without retry-after waits a minute", status: 403, message: "You have exceeded a secondary rate limit", wantLimited: true, wantAt: now.Add(time.Minute), wantSecondary: true},
		{name: "repeated secondary backs off", status: 429, streak: 2, wantLimited: true, wantAt: now.Add(4 * time.Minute), wantSecondary: true},
		{name: "secondary back-off is capped", status: 429, streak: 30, wantLimited: true, wantAt: now.Add(15 * time.Minute), wantSecondary: true},
		{name: "garbage retry-after falls back", status: 429, header: map[string]string{"Retry-After": "soon"}, wantLimited: true, wantAt: now.Add(time.Minute), wantSecondary: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: http.Header{}}
			for k, v := range tt.header {
				resp.Header.Set(k, v)
			}
			got, limited := limitFrom(resp, tt.message, now, tt.streak)
			if limited != tt.wantLimited {
				t.Fatalf("limited = %v, want %v", limited, tt.wantLimited)
			}
			if limited && (!got.RetryAt.Equal(tt.wantAt) || got.Secondary != tt.wantSecondary) {
				t.Fatalf("limit = %+v, want retry at %s secondary %v", got, tt.wantAt, tt.wantSecondary)
			}
		})
	}
}

func TestGate_exhaustedBudgetClosesUntilReset(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	g := &gate{}
	last := &http.Response{StatusCode: 200, Header: http.Header{}}
	last.Header.Set("X-Ratelimit-Remaining", "0")
	last.Header.Set("X-Ratelimit-Reset", strconv.FormatInt(now.Add(time.Minute).Unix(), 10))
	if _, limited := g.observe(last, "", now); limited {
		t.Fatal("a 200 was taken for a rate limit")
	}
	if r := g.refusal(now.Add(59 * time.Second)); r == nil || r.Secondary || !r.RetryAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("refusal before reset = %+v", r)
	}
	if r := g.refusal(now.Add(time.Minute)); r != nil {
		t.Fatalf("refusal at reset = %+v, want none", r)
	}
}

func TestRetryTransport_backoffIsBoundedWithJitter(t *testing.T) {
	rt := &retryTransport{baseDelay: 100 * time.Millisecond, maxDelay: time.Second}
	for attempt, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		for i := 0; i < 20; i++ {
			got := rt.backoff(attempt)
			if got < want/2 || got >= want {
				t.Fatalf("backoff(%d) = %s, want in [%s, %s)", attempt, got, want/2, want)
			}
		}
	}
}

func TestCurrentLabels(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(id int64, added bool, label, actor string, minute int) labelEvent {
		return labelEvent{ID: id, Added: added, Label: label, Actor: actor, At: t0.Add(time.Duration(minute) * time.Minute)}
	}
	tests := []struct {
		name    string
		current []string
		events  []labelEvent
		want    []scm.AppliedLabel
	}{
		{name: "single add", current: []string{"ok"}, events: []labelEvent{ev(1, true, "ok", "ann", 0)},
			want: []scm.AppliedLabel{{Name: "ok", AddedBy: "ann", AddedAt: t0}}},
		{name: "latest add wins", current: []string{"ok"}, events: []labelEvent{ev(1, true, "ok", "ann", 0), ev(2, false, "ok", "ann", 1), ev(3, true, "ok", "bob", 2)},
			want: []scm.AppliedLabel{{Name: "ok", AddedBy: "bob", AddedAt: t0.Add(2 * time.Minute)}}},
		{name: "events out of order are sorted", current: []string{"ok"}, events: []labelEvent{ev(3, true, "ok", "bob", 2), ev(1, true, "ok", "ann", 0), ev(2, false, "ok", "ann", 1)},
			want: []scm.AppliedLabel{{Name: "ok", AddedBy: "bob", AddedAt: t0.Add(2 * time.Minute)}}},
		{name: "same second ordered by id", current: []string{"ok"}, events: []labelEvent{ev(5, true, "ok", "bob", 0), ev(4, false, "ok", "ann", 0), ev(3, true, "ok", "ann", 0)},
			want: []scm.AppliedLabel{{Name: "ok", AddedBy: "bob", AddedAt: t0}}},
		{name: "case-insensitive names", current: []string{"Sluice/Approve"}, events: []labelEvent{ev(1, true, "sluice/approve", "ann", 0)},
			want: []scm.AppliedLabel{{Name: "Sluice/Approve", AddedBy: "ann", AddedAt: t0}}},
		{name: "removed label not current", current: nil, events: []labelEvent{ev(1, true, "ok", "ann", 0), ev(2, false, "ok", "bob", 1)},
			want: []scm.AppliedLabel{}},
		{name: "label without history has no actor", current: []string{"ok"}, events: []labelEvent{ev(1, true, "ok", "ann", 0), ev(2, false, "ok", "ann", 1)},
			want: []scm.AppliedLabel{{Name: "ok"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := currentLabels(tt.current, tt.events); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("currentLabels = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPlanRevert(t *testing.T) {
	f := func(sha string) treeEntry { return treeEntry{SHA: sha, Mode: "100644", Type: "blob"} }
	tests := []struct {
		name          string
		reverted      map[string]treeEntry
		parent        map[string]treeEntry
		head          map[string]treeEntry
		wantChanges   []treeChange
		wantConflicts []string
	}{
		{
			name:     "modified file goes back",
			reverted: map[string]treeEntry{"a": f("a2"), "b": f("b1")}, parent: map[string]treeEntry{"a": f("a1"), "b": f("b1")},
			head:        map[string]treeEntry{"a": f("a2"), "b": f("b2")},
			wantChanges: []treeChange{{Path: "a", Entry: &treeEntry{SHA: "a1", Mode: "100644", Type: "blob"}}},
		},
		{
			name:     "added file is removed",
			reverted: map[string]treeEntry{"a": f("a1"), "new": f("n")}, parent: map[string]treeEntry{"a": f("a1")},
			head:        map[string]treeEntry{"a": f("a1"), "new": f("n")},
			wantChanges: []treeChange{{Path: "new", Removed: &treeEntry{SHA: "n", Mode: "100644", Type: "blob"}}},
		},
		{
			name:     "removed file comes back",
			reverted: map[string]treeEntry{}, parent: map[string]treeEntry{"gone": f("g")},
			head:        map[string]treeEntry{"x": f("x")},
			wantChanges: []treeChange{{Path: "gone", Entry: &treeEntry{SHA: "g", Mode: "100644", Type: "blob"}}},
		},
		{
			name:     "later change to the same file conflicts",
			reverted: map[string]treeEntry{"a": f("a2")}, parent: map[string]treeEntry{"a": f("a1")},
			head:          map[string]treeEntry{"a": f("a3")},
			wantConflicts: []string{"a"},
		},
		{
			name:     "already undone is skipped",
			reverted: map[string]treeEntry{"a": f("a2")}, parent: map[string]treeEntry{"a": f("a1")},
			head: map[string]treeEntry{"a": f("a1")},
		},
		{
			name:     "mode change goes back",
			reverted: map[string]treeEntry{"run.sh": {SHA: "s", Mode: "100755", Type: "blob"}}, parent: map[string]treeEntry{"run.sh": f("s")},
			head:        map[string]treeEntry{"run.sh": {SHA: "s", Mode: "100755", Type: "blob"}},
			wantChanges: []treeChange{{Path: "run.sh", Entry: &treeEntry{SHA: "s", Mode: "100644", Type: "blob"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes, conflicts := planRevert(tt.reverted, tt.parent, tt.head)
			if !reflect.DeepEqual(changes, tt.wantChanges) || !reflect.DeepEqual(conflicts, tt.wantConflicts) {
				t.Fatalf("planRevert = %+v, %v; want %+v, %v", changes, conflicts, tt.wantChanges, tt.wantConflicts)
			}
		})
	}
}

func FuzzRateLimitHeaders(f *testing.F) {
	f.Add(403, "0", "1900000000", "", "")
	f.Add(429, "", "", "30", "secondary rate limit")
	f.Add(429, "x", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "")
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, remaining, reset, retry, message string) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		resp.Header.Set("X-Ratelimit-Remaining", remaining)
		resp.Header.Set("X-Ratelimit-Reset", reset)
		resp.Header.Set("Retry-After", retry)
		rl, limited := limitFrom(resp, message, now, 3)
		if limited && rl.RetryAt.Before(now) {
			t.Fatalf("a limit that ends in the past: %+v", rl)
		}
		if limited && status != 403 && status != 429 {
			t.Fatalf("status %d taken for a limit", status)
		}
	})
}
