package githubfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder collects what the fake reports instead of failing the test.
type recorder struct {
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errors, "\n")
}

func startRecorded(t *testing.T) (*Server, *recorder, string) {
	t.Helper()
	rec := &recorder{}
	fake, err := New(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	fake.AddToken("tok", "alice")
	sha := fake.CreateRepo("acme/app", "main", map[string]string{"a.txt": "a\n"})
	return fake, rec, sha
}

func do(t *testing.T, method, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

func TestValidation_rejectsMalformedRequest(t *testing.T) {
	fake, rec, sha := startRecorded(t)

	// A well-formed status is accepted and nothing is reported.
	resp := do(t, http.MethodPost, fake.URL+"repos/acme/app/statuses/"+sha, `{"state":"pending","context":"c"}`)
	if resp.StatusCode != http.StatusCreated || rec.all() != "" {
		t.Fatalf("valid request: status %d, reports %q", resp.StatusCode, rec.all())
	}
	// A state the description does not allow is rejected and reported.
	resp = do(t, http.MethodPost, fake.URL+"repos/acme/app/statuses/"+sha, `{"state":"bogus","context":"c"}`)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("invalid state: status %d, want 422", resp.StatusCode)
	}
	if got := rec.all(); !strings.Contains(got, "does not match GitHub's description") || !strings.Contains(got, "state") {
		t.Errorf("invalid state was not reported: %q", got)
	}
	if n := len(fake.Statuses("acme/app", sha)); n != 1 {
		t.Errorf("statuses = %d, want only the valid one", n)
	}
}

func TestValidation_rejectsUndocumentedEndpoint(t *testing.T) {
	fake, rec, _ := startRecorded(t)
	resp := do(t, http.MethodGet, fake.URL+"repos/acme/app/issues", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
	if !strings.Contains(rec.all(), "is not an operation of the trimmed GitHub description") {
		t.Errorf("undocumented endpoint was not reported: %q", rec.all())
	}
}

func TestValidation_rejectsMalformedResponse(t *testing.T) {
	fake, rec, sha := startRecorded(t)
	fake.CorruptResponses(func(op string, body []byte) []byte {
		if op != "git/get-commit" {
			return body
		}
		var v map[string]any
		_ = json.Unmarshal(body, &v)
		delete(v, "tree")
		out, _ := json.Marshal(v)
		return out
	})
	do(t, http.MethodGet, fake.URL+"repos/acme/app/git/commits/"+sha, "")
	if got := rec.all(); !strings.Contains(got, "response 200") || !strings.Contains(got, "tree") {
		t.Errorf("a commit without its tree was not reported: %q", got)
	}
}

func TestWebhooks_signedValidDeliveries(t *testing.T) {
	fake, err := New(t)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	secret := []byte("s3cret")
	base := fake.CreateRepo("acme/app", "main", map[string]string{"a.txt": "a\n"})
	head := fake.Commit("acme/app", "feature", "main", "Bump image", map[string]string{"a.txt": "b\n"}, Signature{Name: "bob", Email: "bob@example.com"})
	pr := fake.OpenPullRequest("acme/app", "feature", "main", "Bump image", "bob")
	fake.AddLabel("acme/app", pr, "sluice/approve", "carol")

	type got struct {
		event, delivery, action string
		validSig                bool
	}
	var mu sync.Mutex
	var received []got
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var payload struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(body, &payload)
		mu.Lock()
		received = append(received, got{
			event: r.Header.Get("X-GitHub-Event"), delivery: r.Header.Get("X-GitHub-Delivery"), action: payload.Action,
			validSig: r.Header.Get("X-Hub-Signature-256") == Sign(secret, body),
		})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	ctx := context.Background()

	labeled, err := fake.DeliverLabel(ctx, receiver.URL, secret, "acme/app", pr, "sluice/approve", "carol", true)
	if err != nil || labeled.Status != http.StatusNoContent {
		t.Fatalf("labeled delivery: %+v, %v", labeled, err)
	}
	if _, err := fake.DeliverLabel(ctx, receiver.URL, secret, "acme/app", pr, "sluice/approve", "carol", false); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.DeliverPush(ctx, receiver.URL, secret, "acme/app", "feature", base, head, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.DeliverPing(ctx, receiver.URL, secret, "acme/app", 7); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.Redeliver(ctx, receiver.URL, secret, labeled); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []struct{ event, action string }{{"pull_request", "labeled"}, {"pull_request", "unlabeled"}, {"push", ""}, {"ping", ""}, {"pull_request", "labeled"}}
	if len(received) != len(want) {
		t.Fatalf("received %d deliveries, want %d", len(received), len(want))
	}
	for i, w := range want {
		if received[i].event != w.event || received[i].action != w.action || !received[i].validSig || received[i].delivery == "" {
			t.Errorf("delivery %d = %+v, want %s/%s with a valid signature and an id", i, received[i], w.event, w.action)
		}
	}
	if received[4].delivery != received[0].delivery || received[1].delivery == received[0].delivery {
		t.Error("a redelivery must keep its id and new deliveries must get new ones")
	}
}

func TestWebhooks_schemaRejectsMalformedPayload(t *testing.T) {
	var w webhooks
	valid, err := w.build("ping$event", map[string]any{"zen": "z", "hook_id": 1})
	if err != nil {
		t.Fatalf("a ping skeleton does not validate: %v", err)
	}
	var v map[string]any
	_ = json.Unmarshal(valid, &v)
	v["hook_id"] = "not a number"
	broken, _ := json.Marshal(v)
	if err := w.validate("ping$event", broken); err == nil {
		t.Error("a ping whose hook_id is a string validated")
	}
	labeled, err := w.build("pull_request$labeled", map[string]any{"action": "labeled"})
	if err != nil {
		t.Fatalf("a labeled skeleton does not validate: %v", err)
	}
	if err := w.validate("pull_request$labeled", bytes.Replace(labeled, []byte(`"labeled"`), []byte(`"closed"`), 1)); err == nil {
		t.Error("a pull_request payload with action closed validated as labeled")
	}
}
