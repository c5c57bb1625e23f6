package receiver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/githubfake"
)

// checkRunJSON is a check_run payload of action with the fields sluice reads, a press of the
// button identifier on sluice's check run of prod/checkout.
func checkRunJSON(action, identifier string) string {
	return fmt.Sprintf(`{"action":%q,"repository":{"full_name":"acme/app"},"sender":{"login":"reviewer"},`+
		`"check_run":{"id":42,"name":"sluice/prod/checkout","external_id":"prod/checkout","head_sha":%q},`+
		`"requested_action":{"identifier":%q}}`, action, headSHA, identifier)
}

// A button press is handed on with the check run, the button and who pressed it, and can tell
// which secret signed it; unsigned, forged and malformed presses never reach the Trigger.
func TestHandler_checkRunRequestedAction(t *testing.T) {
	want := Event{Delivery: "d-1", Kind: KindCheckRun, Action: ActionRequestedAction, Repository: "acme/app", Sender: "reviewer",
		SHA: headSHA, CheckRun: 42, CheckRunName: "sluice/prod/checkout", ExternalID: "prod/checkout", Identifier: "approve-1"}
	tests := []struct {
		name       string
		delivery   delivery
		wantStatus int
		wantReason string
	}{
		{"signed with the repository's secret", signed("check_run", "d-1", checkRunJSON("requested_action", "approve-1"), secret), http.StatusOK, "accepted/check_run"},
		{"unsigned", delivery{method: http.MethodPost, contentType: "application/json", event: "check_run", id: "d-1", body: checkRunJSON("requested_action", "approve-1")},
			http.StatusUnauthorized, "rejected/missing-signature"},
		{"forged", signed("check_run", "d-1", checkRunJSON("requested_action", "approve-1"), []byte("guess")), http.StatusUnauthorized, "rejected/bad-signature"},
		{"no button", signed("check_run", "d-1", checkRunJSON("requested_action", ""), secret), http.StatusBadRequest, "rejected/malformed"},
		{"no commit", signed("check_run", "d-1", strings.Replace(checkRunJSON("requested_action", "approve-1"), headSHA, "main", 1), secret),
			http.StatusBadRequest, "rejected/malformed"},
		{"no check run id", signed("check_run", "d-1", strings.Replace(checkRunJSON("requested_action", "approve-1"), `"id":42,`, "", 1), secret),
			http.StatusBadRequest, "rejected/malformed"},
		{"no presser", signed("check_run", "d-1", strings.Replace(checkRunJSON("requested_action", "approve-1"), `"login":"reviewer"`, `"login":""`, 1), secret),
			http.StatusBadRequest, "rejected/malformed"},
		{"re-requested", signed("check_run", "d-1", checkRunJSON("rerequested", ""), secret), http.StatusAccepted, "rejected/ignored-action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 0)
			status, body := h.send(tt.delivery)
			if status != tt.wantStatus {
				t.Fatalf("answer = %d %q, want %d", status, body, tt.wantStatus)
			}
			if got := h.metrics.all(); len(got) != 1 || got[0] != tt.wantReason {
				t.Errorf("counted %v, want [%s]", got, tt.wantReason)
			}
			got := h.trigger.all()
			if tt.wantStatus != http.StatusOK {
				if len(got) != 0 {
					t.Fatalf("triggered %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("triggered %d events, want 1", len(got))
			}
			e := got[0]
			if !e.SignedWith(secret) || e.SignedWith(otherSecret) || e.SignedWith(nil) {
				t.Errorf("SignedWith: the repository's secret %v, another %v, none %v; want true, false, false",
					e.SignedWith(secret), e.SignedWith(otherSecret), e.SignedWith(nil))
			}
			e.signature, e.payload = "", ""
			if e != want {
				t.Errorf("event = %+v, want %+v", e, want)
			}
			p, err := PressOf(got[0], time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC))
			if err != nil || p.Rollout != "prod/checkout" || p.Identifier != "approve-1" || p.By != "reviewer" || p.Delivery != "d-1" || p.HeadSHA != headSHA || p.CheckRun != 42 {
				t.Errorf("PressOf = %+v, %v", p, err)
			}
		})
	}
}

// The fake's check_run delivery, built from a check run it stores and validated against
// @octokit/webhooks-schemas, decodes into the press of the button.
func TestHandler_requestedActionFromTheGitHubFake(t *testing.T) {
	fake, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	sha := fake.CreateRepo("acme/app", "main", map[string]string{"deploy.yaml": "image: app:1\n"})
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake.AddApp(4711, "", 99, &key.PublicKey, "sluice", time.Hour)
	id := fake.AddCheckRun("acme/app", 4711, githubfake.CheckRun{HeadSHA: sha, Name: "sluice/prod/checkout", ExternalID: "prod/checkout",
		Status: "in_progress", Title: "Step 1/3 paused", Summary: "waiting",
		Actions: []githubfake.CheckRunAction{{Label: "Approve step 1", Description: "Release step 2 of 3", Identifier: "approve-1"}}})
	trigger := &triggered{}
	handler, err := New(Options{Trigger: trigger, Secrets: secretMap{"acme/app": {secret}}})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(handler)
	defer server.Close()

	d, err := fake.DeliverRequestedAction(context.Background(), server.URL, secret, "acme/app", id, "approve-1", "reviewer")
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("delivery: %d, %v", d.Status, err)
	}
	forged, err := fake.DeliverRequestedAction(context.Background(), server.URL, []byte("guess"), "acme/app", id, "approve-1", "mallory")
	if err != nil || forged.Status != http.StatusUnauthorized {
		t.Fatalf("forged delivery: %d, %v; want 401", forged.Status, err)
	}
	got := trigger.all()
	if len(got) != 1 {
		t.Fatalf("triggered %d events, want the genuine press only", len(got))
	}
	p, err := PressOf(got[0], time.Now())
	if err != nil || p.Delivery != d.ID || p.CheckRun != id || p.HeadSHA != sha || p.Rollout != "prod/checkout" || p.By != "reviewer" || p.Identifier != "approve-1" {
		t.Fatalf("press = %+v, %v", p, err)
	}
	if err := fake.ValidateWebhook("check_run$requested_action", []byte(`{"action":"requested_action"}`)); err == nil {
		t.Fatal("a bare check_run payload passed @octokit/webhooks-schemas")
	}
}
