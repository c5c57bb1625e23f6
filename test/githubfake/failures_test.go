package githubfake

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// FailFor fails every request while the fake's clock is before its end,
// however many there are, and none after it.
func TestFailFor_failsUntilTheClockPassesItsEnd(t *testing.T) {
	fake, rec, sha := startRecorded(t)
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	fake.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	fake.FailFor("", http.StatusInternalServerError, 20*time.Second)
	url := fake.URL + "repos/acme/app/git/commits/" + sha
	for i := range 5 {
		if resp := do(t, http.MethodGet, url, ""); resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("request %d during the failure answered %d, want 500", i, resp.StatusCode)
		}
		advance(3 * time.Second)
	}
	advance(6 * time.Second) // 21s on
	if resp := do(t, http.MethodGet, url, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the failure answered %d, want 200", resp.StatusCode)
	}
	if r := rec.all(); r != "" {
		t.Errorf("the fake reported: %s", r)
	}
}
