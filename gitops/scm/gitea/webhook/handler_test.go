package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/receiver"
)

const (
	testRepo   = "acme/app"
	testSecret = "s3cret"
	headSHA    = "0123456789abcdef0123456789abcdef01234567"
	mergeSHA   = "89abcdef0123456789abcdef0123456789abcdef"
)

// recorder is a Trigger, Secrets and Metrics that remembers what it was given.
type recorder struct {
	mu       sync.Mutex
	events   []receiver.Event
	counts   map[string]int
	secrets  map[string][][]byte
	failWith error
}

func newRecorder() *recorder {
	return &recorder{counts: map[string]int{}, secrets: map[string][][]byte{testRepo: {[]byte("other"), []byte(testSecret)}}}
}

func (r *recorder) Trigger(_ context.Context, e receiver.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) SecretsFor(_ context.Context, repository string) ([][]byte, error) {
	if r.failWith != nil {
		return nil, r.failWith
	}
	return r.secrets[repository], nil
}

func (r *recorder) Delivery(accepted bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if accepted {
		reason = "accepted:" + reason
	}
	r.counts[reason]++
}

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// deliver posts body as a Gitea delivery of event with the given headers overriding the
// defaults (an empty value removes a header).
func deliver(t *testing.T, h http.Handler, event, body string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/hooks/gitea", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitea-Event", event)
	req.Header.Set("X-Gitea-Delivery", "d-"+event+"-"+sign("id", body)[:8])
	req.Header.Set("X-Gitea-Signature", sign(testSecret, body))
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func newHandler(t *testing.T, r *recorder) *Handler {
	t.Helper()
	h, err := New(Options{Trigger: r, Secrets: r, Metrics: r})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const (
	labelPayload  = `{"action":"label_updated","number":7,"pull_request":{"number":7,"head":{"ref":"feature","sha":"` + headSHA + `"},"base":{"ref":"main","sha":"` + mergeSHA + `"},"merged":false,"merge_commit_sha":null,"labels":[{"name":"sluice/approve"}]},"repository":{"full_name":"acme/app"},"sender":{"login":"alice","username":"alice"}}`
	mergedPayload = `{"action":"closed","number":7,"pull_request":{"number":7,"head":{"ref":"feature","sha":"` + headSHA + `"},"base":{"ref":"main"},"merged":true,"merge_commit_sha":"` + mergeSHA + `"},"repository":{"full_name":"acme/app"},"sender":{"login":"alice"}}`
	pushPayload   = `{"ref":"refs/heads/main","before":"` + headSHA + `","after":"` + mergeSHA + `","repository":{"full_name":"acme/app"},"pusher":{"login":"bob"},"sender":{"login":"bob"}}`
	commentPR     = `{"action":"created","issue":{"number":7,"pull_request":{"merged":false}},"comment":{"body":"/sluice approve"},"repository":{"full_name":"acme/app"},"sender":{"login":"bob"},"is_pull":true}`
	commentIssue  = `{"action":"created","issue":{"number":8,"pull_request":null},"comment":{"body":"hi"},"repository":{"full_name":"acme/app"},"sender":{"login":"bob"},"is_pull":false}`
)

func TestHandler_decodesGiteaEventsIntoHints(t *testing.T) {
	tests := []struct {
		name, event, body string
		want              receiver.Event
	}{
		{"a label change", "pull_request", labelPayload, receiver.Event{Kind: receiver.KindPullRequest, Action: receiver.ActionLabeled, Repository: testRepo, Sender: "alice", Number: 7, SHA: headSHA, Ref: "main"}},
		{"a merge", "pull_request", mergedPayload, receiver.Event{Kind: receiver.KindPullRequest, Action: receiver.ActionClosed, Repository: testRepo, Sender: "alice", Number: 7, SHA: headSHA, Ref: "main", Merged: true, MergeCommitSHA: mergeSHA}},
		{"new commits", "pull_request", strings.Replace(labelPayload, "label_updated", "synchronized", 1), receiver.Event{Kind: receiver.KindPullRequest, Action: receiver.ActionSynchronize, Repository: testRepo, Sender: "alice", Number: 7, SHA: headSHA, Ref: "main"}},
		{"labels cleared", "pull_request", strings.Replace(labelPayload, "label_updated", "label_cleared", 1), receiver.Event{Kind: receiver.KindPullRequest, Action: receiver.ActionUnlabeled, Repository: testRepo, Sender: "alice", Number: 7, SHA: headSHA, Ref: "main"}},
		{"a push", "push", pushPayload, receiver.Event{Kind: receiver.KindPush, Repository: testRepo, Sender: "bob", SHA: mergeSHA, Ref: "refs/heads/main"}},
		{"a comment on a pull request", "issue_comment", commentPR, receiver.Event{Kind: KindIssueComment, Action: "created", Repository: testRepo, Sender: "bob", Number: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			rec := deliver(t, newHandler(t, r), tt.event, tt.body, nil)
			if rec.Code != http.StatusOK || len(r.events) != 1 {
				t.Fatalf("answer %d %q, %d events; want 200 and one event", rec.Code, rec.Body.String(), len(r.events))
			}
			got := r.events[0]
			got.Delivery = ""
			if got != tt.want {
				t.Fatalf("event = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestHandler_refusesWhatIsNotAuthenticOrNotUsed(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		body    string
		headers map[string]string
		status  int
		reason  string
	}{
		{"no signature", "push", pushPayload, map[string]string{"X-Gitea-Signature": ""}, http.StatusUnauthorized, receiver.ReasonMissingSignature},
		{"a signature with another secret", "push", pushPayload, map[string]string{"X-Gitea-Signature": sign("wrong", pushPayload)}, http.StatusUnauthorized, receiver.ReasonBadSignature},
		{"a signature of other bytes", "push", pushPayload, map[string]string{"X-Gitea-Signature": sign(testSecret, pushPayload+" ")}, http.StatusUnauthorized, receiver.ReasonBadSignature},
		{"a malformed signature", "push", pushPayload, map[string]string{"X-Gitea-Signature": "zz"}, http.StatusUnauthorized, receiver.ReasonMissingSignature},
		{"an unknown repository", "push", strings.Replace(pushPayload, "acme/app", "acme/other", 1), map[string]string{"X-Gitea-Signature": sign(testSecret, strings.Replace(pushPayload, "acme/app", "acme/other", 1))}, http.StatusUnauthorized, receiver.ReasonUnknownRepository},
		{"no event header", "", pushPayload, map[string]string{"X-Gitea-Event": ""}, http.StatusBadRequest, receiver.ReasonMissingHeader},
		{"an event sluice does not use", "release", pushPayload, nil, http.StatusAccepted, receiver.ReasonUnknownEvent},
		{"an action sluice does not use", "pull_request", strings.Replace(labelPayload, "label_updated", "milestoned", 1), map[string]string{"X-Gitea-Signature": sign(testSecret, strings.Replace(labelPayload, "label_updated", "milestoned", 1))}, http.StatusAccepted, receiver.ReasonIgnoredAction},
		{"a comment on an issue", "issue_comment", commentIssue, nil, http.StatusAccepted, receiver.ReasonIgnoredAction},
		{"a payload without the head commit", "pull_request", strings.Replace(labelPayload, headSHA, "nope", 1), map[string]string{"X-Gitea-Signature": sign(testSecret, strings.Replace(labelPayload, headSHA, "nope", 1))}, http.StatusBadRequest, receiver.ReasonMalformed},
		{"a body that is not JSON", "push", "not json", map[string]string{"X-Gitea-Signature": sign(testSecret, "not json")}, http.StatusBadRequest, receiver.ReasonMalformed},
		{"a text body", "push", pushPayload, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, receiver.ReasonBadContentType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			rec := deliver(t, newHandler(t, r), tt.event, tt.body, tt.headers)
			if rec.Code != tt.status || r.counts[tt.reason] != 1 || len(r.events) != 0 {
				t.Fatalf("answer %d %q, counts %v, %d events; want %d, reason %s, no event", rec.Code, rec.Body.String(), r.counts, len(r.events), tt.status, tt.reason)
			}
		})
	}
}

func TestHandler_forgejoHeaders_andFormDeliveries(t *testing.T) {
	r := newRecorder()
	h := newHandler(t, r)
	// Forgejo's headers are preferred over the Gitea ones it also sends.
	rec := deliver(t, h, "push", pushPayload, map[string]string{
		"X-Forgejo-Event": "push", "X-Forgejo-Delivery": "f-1", "X-Forgejo-Signature": sign(testSecret, pushPayload),
		"X-Gitea-Signature": "0000000000000000000000000000000000000000000000000000000000000000",
	})
	if rec.Code != http.StatusOK || len(r.events) != 1 || r.events[0].Delivery != "f-1" {
		t.Fatalf("Forgejo delivery: %d %q, events %+v", rec.Code, rec.Body.String(), r.events)
	}
	// A form delivery is signed over its payload field, as Gitea signs it.
	form := url.Values{"payload": {labelPayload}}.Encode()
	rec = deliver(t, h, "pull_request", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Gitea-Signature": sign(testSecret, labelPayload)})
	if rec.Code != http.StatusOK || len(r.events) != 2 {
		t.Fatalf("form delivery: %d %q", rec.Code, rec.Body.String())
	}
}

func TestHandler_duplicatesAndLimits(t *testing.T) {
	r := newRecorder()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h, err := New(Options{Trigger: r, Secrets: r, Metrics: r, MaxBodyBytes: 2048, DeliveryTTL: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	same := map[string]string{"X-Gitea-Delivery": "d-1"}
	if rec := deliver(t, h, "push", pushPayload, same); rec.Code != http.StatusOK {
		t.Fatalf("first delivery: %d", rec.Code)
	}
	if rec := deliver(t, h, "push", pushPayload, same); rec.Code != http.StatusOK || r.counts[receiver.ReasonDuplicate] != 1 || len(r.events) != 1 {
		t.Fatalf("replay: %d, counts %v, %d events; want 200 duplicate, one event", rec.Code, r.counts, len(r.events))
	}
	now = now.Add(time.Hour)
	if rec := deliver(t, h, "push", pushPayload, same); rec.Code != http.StatusOK || len(r.events) != 2 {
		t.Fatalf("after the time to live: %d, %d events; want it accepted again", rec.Code, len(r.events))
	}
	big := `{"repository":{"full_name":"acme/app"},"pad":"` + strings.Repeat("x", 4096) + `"}`
	if rec := deliver(t, h, "push", big, nil); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the cap: %d, want 413", rec.Code)
	}
	r.failWith = errors.New("lister down")
	if rec := deliver(t, h, "push", strings.Replace(pushPayload, "bob", "eve", 2), map[string]string{"X-Gitea-Signature": sign(testSecret, strings.Replace(pushPayload, "bob", "eve", 2))}); rec.Code != http.StatusInternalServerError {
		t.Fatalf("a failed secret lookup: %d, want 500", rec.Code)
	}
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{labelPayload, mergedPayload, pushPayload, commentPR, commentIssue, `{}`, `[]`, `{"repository":null}`} {
		f.Add("pull_request", seed)
		f.Add("push", seed)
		f.Add("issue_comment", seed)
	}
	f.Fuzz(func(t *testing.T, kind, body string) {
		k := receiver.Kind(kind)
		if !handledKind(k) {
			return
		}
		e, handled, err := decode(k, []byte(body))
		if err != nil {
			var fe *receiver.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("decode error %v is not a *receiver.FieldError", err)
			}
			return
		}
		if !handled {
			return
		}
		if e.Repository == "" || e.Sender == "" {
			t.Fatalf("handled event without repository or sender: %+v", e)
		}
		if (k == receiver.KindPullRequest || k == KindIssueComment) && e.Number <= 0 {
			t.Fatalf("pull request event without a number: %+v", e)
		}
		if e.SHA != "" && !commitid.Valid(e.SHA) {
			t.Fatalf("event with a malformed SHA: %+v", e)
		}
	})
}
