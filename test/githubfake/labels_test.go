package githubfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// hookReceiver records the deliveries it receives: event, action, label and whether the
// signature is valid for secret.
type hookReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []string
	keys []byte
}

func newHookReceiver(t *testing.T, secret []byte) *hookReceiver {
	t.Helper()
	h := &hookReceiver{keys: secret}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct {
			Action string `json:"action"`
			Label  struct {
				Name string `json:"name"`
			} `json:"label"`
			Sender struct {
				Login string `json:"login"`
			} `json:"sender"`
		}
		_ = json.Unmarshal(body, &p)
		valid := r.Header.Get("X-Hub-Signature-256") == Sign(h.keys, body)
		h.mu.Lock()
		h.got = append(h.got, strings.Join([]string{r.Header.Get("X-GitHub-Event"), p.Action, p.Label.Name, p.Sender.Login, map[bool]string{true: "signed", false: "BAD SIGNATURE"}[valid]}, " "))
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) received() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.got, "\n")
}

// A person labels a pull request through the REST API, as with curl or gh: the label is
// recorded with its author, and the repository's webhook receives a signed pull_request
// delivery once the call is answered. Someone without triage access is refused.
func TestLabels_throughTheAPI_areRecordedAndDeliveredToTheHooks(t *testing.T) {
	fake, rec, _ := startRecorded(t)
	secret := []byte("hook-secret")
	hook := newHookReceiver(t, secret)
	fake.AddHook("acme/app", hook.URL, secret)
	fake.Commit("acme/app", "feature", "main", "Bump", map[string]string{"a.txt": "b\n"}, Signature{Name: "bob"})
	pr := fake.OpenPullRequest("acme/app", "feature", "main", "Bump", "bob")
	fake.SetRole("acme/app", "alice", RoleWrite)
	url := fake.URL + "repos/acme/app/issues/" + itoa(int64(pr)) + "/labels"

	// When alice (write) adds sluice/approve.
	if resp := do(t, http.MethodPost, url, `{"labels":["sluice/approve"]}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("add-labels answered %d, want 200; reports: %s", resp.StatusCode, rec.all())
	}
	// Then the pull request carries it, its history says alice added it, and the hook got
	// one signed labeled delivery.
	if got := hook.received(); got != "pull_request labeled sluice/approve alice signed" {
		t.Errorf("deliveries:\n%s", got)
	}
	if d := fake.HookDeliveries(); len(d) != 1 || d[0].Status != http.StatusOK || d[0].Err != nil || d[0].URL != hook.URL {
		t.Errorf("recorded deliveries = %+v", d)
	}
	resp := do(t, http.MethodGet, fake.URL+"repos/acme/app/issues/"+itoa(int64(pr))+"/events", "")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("list-events answered %d", resp.StatusCode)
	}
	// Adding it again changes nothing and delivers nothing.
	do(t, http.MethodPost, url, `{"labels":["sluice/approve"]}`)
	// When alice removes it.
	if resp := do(t, http.MethodDelete, url+"/sluice%2Fapprove", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("remove-label answered %d, want 200; reports: %s", resp.StatusCode, rec.all())
	}
	if resp := do(t, http.MethodDelete, url+"/sluice%2Fapprove", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("removing a label the pull request lacks answered %d, want 404", resp.StatusCode)
	}
	want := "pull_request labeled sluice/approve alice signed\npull_request unlabeled sluice/approve alice signed"
	if got := hook.received(); got != want {
		t.Errorf("deliveries:\n%s\nwant:\n%s", got, want)
	}

	// Someone with read access is refused, and nothing is delivered.
	fake.SetRole("acme/app", "alice", RoleRead)
	if resp := do(t, http.MethodPost, url, `{"labels":["sluice/rollback"]}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("add-labels by a reader answered %d, want 403", resp.StatusCode)
	}
	if got := hook.received(); got != want {
		t.Errorf("a refused label was delivered:\n%s", got)
	}
	if got := rec.all(); got != "" {
		t.Errorf("the fake reported: %s", got)
	}
}

// NotifyPush delivers a push to every hook of the repository.
func TestNotifyPush_deliversToEveryHook(t *testing.T) {
	fake, rec, base := startRecorded(t)
	a, b := newHookReceiver(t, []byte("a")), newHookReceiver(t, []byte("b"))
	fake.AddHook("acme/app", a.URL, []byte("a"))
	fake.AddHook("acme/app", b.URL, []byte("b"))
	head := fake.Commit("acme/app", "main", "main", "Change", map[string]string{"a.txt": "c\n"}, Signature{Name: "bob"})
	got := fake.NotifyPush(context.Background(), "acme/app", "main", base, head, "bob")
	if len(got) != 2 || got[0].Status != http.StatusOK || got[1].Status != http.StatusOK {
		t.Fatalf("deliveries = %+v", got)
	}
	for _, h := range []*hookReceiver{a, b} {
		if r := h.received(); r != "push   bob signed" {
			t.Errorf("hook received %q", r)
		}
	}
	if r := rec.all(); r != "" {
		t.Errorf("the fake reported: %s", r)
	}
}
