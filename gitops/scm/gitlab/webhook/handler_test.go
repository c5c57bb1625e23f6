package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/receiver"
)

const (
	testProject = "acme/platform/app"
	testSecret  = "s3cret-token"
	headSHA     = "0123456789abcdef0123456789abcdef01234567"
	mergeSHA    = "89abcdef0123456789abcdef0123456789abcdef"
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
	return &recorder{counts: map[string]int{}, secrets: map[string][][]byte{testProject: {[]byte("other"), []byte(testSecret)}}}
}

func (r *recorder) Trigger(_ context.Context, e receiver.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) SecretsFor(_ context.Context, project string) ([][]byte, error) {
	if r.failWith != nil {
		return nil, r.failWith
	}
	return r.secrets[project], nil
}

func (r *recorder) Delivery(accepted bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if accepted {
		reason = "accepted:" + reason
	}
	r.counts[reason]++
}

func (r *recorder) snapshot() ([]receiver.Event, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[string]int{}
	for k, v := range r.counts {
		counts[k] = v
	}
	return append([]receiver.Event(nil), r.events...), counts
}

var uuidSeq atomic.Int64

// deliver posts body as a GitLab delivery of event, with headers overriding the defaults (an
// empty value removes a header).
func deliver(t *testing.T, h http.Handler, event, body string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	id := "uuid-" + strconv.FormatInt(uuidSeq.Add(1), 10)
	req := httptest.NewRequest(http.MethodPost, "/hooks/gitlab", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", event)
	req.Header.Set("X-Gitlab-Event-UUID", id)
	req.Header.Set("X-Gitlab-Token", testSecret)
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

// noteOn is the key GitLab names a note's target type with.
const noteOn = `"noteable_type":` //nolint:misspell // GitLab's field name

const (
	project = `"project":{"id":5,"path_with_namespace":"acme/platform/app"}`
	mrAttrs = `"object_attributes":{"iid":7,"action":"%s","state":"opened","target_branch":"main","merge_commit_sha":null,"last_commit":{"id":"` + headSHA + `"}%s}`
	user    = `"user":{"id":1,"username":"alice"}`
)

func mrPayload(action, extraAttrs, changes string) string {
	attrs := strings.Replace(strings.Replace(mrAttrs, "%s", action, 1), "%s", extraAttrs, 1)
	out := `{"object_kind":"merge_request",` + user + `,` + project + `,` + attrs
	if changes != "" {
		out += `,"changes":` + changes
	}
	return out + `}`
}

func labels(titles ...string) string {
	var parts []string
	for _, t := range titles {
		parts = append(parts, `{"id":1,"title":"`+t+`"}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func labelChange(previous, current string) string {
	return `{"labels":{"previous":` + previous + `,"current":` + current + `}}`
}

var (
	pushPayload     = `{"object_kind":"push","ref":"refs/heads/main","before":"` + headSHA + `","after":"` + mergeSHA + `","user_username":"bob",` + project + `}`
	notePayload     = `{"object_kind":"note",` + user + `,` + project + `,"object_attributes":{"id":9,"note":"/sluice approve",` + noteOn + `"MergeRequest","action":"create"},"merge_request":{"iid":7}}`
	issueNote       = `{"object_kind":"note",` + user + `,` + project + `,"object_attributes":{"id":9,"note":"hi",` + noteOn + `"Issue"},"issue":{"iid":3}}`
	mergedPayload   = strings.Replace(mrPayload("merge", "", ""), `"merge_commit_sha":null`, `"merge_commit_sha":"`+mergeSHA+`"`, 1)
	approvedPayload = mrPayload("approved", "", "")
)

func TestHandler_decodesGitLabEventsIntoHints(t *testing.T) {
	pr := func(action, label string) receiver.Event {
		return receiver.Event{Kind: receiver.KindPullRequest, Action: action, Repository: testProject, Sender: "alice", Number: 7, SHA: headSHA, Ref: "main", Label: label}
	}
	review := func(action string) receiver.Event {
		e := pr(action, "")
		e.Kind = receiver.KindPullRequestReview
		return e
	}
	merged := pr(receiver.ActionClosed, "")
	merged.Merged, merged.MergeCommitSHA = true, mergeSHA
	ffMerged := pr(receiver.ActionClosed, "")
	ffMerged.Merged = true
	tests := []struct {
		name, event, body string
		want              receiver.Event
	}{
		{"opened", "Merge Request Hook", mrPayload("open", "", ""), pr(receiver.ActionOpened, "")},
		{"reopened", "Merge Request Hook", mrPayload("reopen", "", ""), pr(receiver.ActionReopened, "")},
		{"closed", "Merge Request Hook", mrPayload("close", "", ""), pr(receiver.ActionClosed, "")},
		{"merged", "Merge Request Hook", mergedPayload, merged},
		{"merged without a merge commit", "Merge Request Hook", mrPayload("merge", "", ""), ffMerged},
		{"new commits", "Merge Request Hook", mrPayload("update", `,"oldrev":"`+mergeSHA+`"`, ""), pr(receiver.ActionSynchronize, "")},
		{"a label added", "Merge Request Hook", mrPayload("update", "", labelChange(labels("x"), labels("x", "sluice/approve"))), pr(receiver.ActionLabeled, "sluice/approve")},
		{"a label removed", "Merge Request Hook", mrPayload("update", "", labelChange(labels("x", "sluice/approve"), labels("x"))), pr(receiver.ActionUnlabeled, "sluice/approve")},
		{"labels swapped", "Merge Request Hook", mrPayload("update", "", labelChange(labels("a"), labels("b"))), pr(receiver.ActionLabeled, "")},
		{"a push", "Push Hook", pushPayload, receiver.Event{Kind: receiver.KindPush, Repository: testProject, Sender: "bob", SHA: mergeSHA, Ref: "refs/heads/main"}},
		{"a tag push", "Tag Push Hook", strings.Replace(pushPayload, "refs/heads/main", "refs/tags/v1", 1), receiver.Event{Kind: receiver.KindPush, Repository: testProject, Sender: "bob", SHA: mergeSHA, Ref: "refs/tags/v1"}},
		{"a comment on a merge request", "Note Hook", notePayload, receiver.Event{Kind: KindIssueComment, Action: "created", Repository: testProject, Sender: "alice", Number: 7}},
		{"an approval", "Merge Request Hook", approvedPayload, review(receiver.ActionSubmitted)},
		{"an approval taken back", "Merge Request Hook", mrPayload("unapproval", "", ""), review(receiver.ActionDismissed)},
		{"an edited comment", "Note Hook", strings.Replace(notePayload, `"create"`, `"update"`, 1), receiver.Event{Kind: KindIssueComment, Action: "edited", Repository: testProject, Sender: "alice", Number: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			rec := deliver(t, newHandler(t, r), tt.event, tt.body, nil)
			events, _ := r.snapshot()
			if rec.Code != http.StatusOK || len(events) != 1 {
				t.Fatalf("answer %d %q, %d events; want 200 and one event", rec.Code, rec.Body.String(), len(events))
			}
			got := events[0]
			if got.Delivery == "" {
				t.Fatal("the event has no delivery id")
			}
			got.Delivery = ""
			if got != tt.want {
				t.Fatalf("event = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestHandler_refusesWhatIsNotAuthenticOrNotUsed(t *testing.T) {
	other := strings.Replace(pushPayload, "acme/platform/app", "acme/other", 1)
	tests := []struct {
		name    string
		event   string
		body    string
		headers map[string]string
		status  int
		reason  string
	}{
		{"no token", "Push Hook", pushPayload, map[string]string{"X-Gitlab-Token": ""}, http.StatusUnauthorized, receiver.ReasonMissingSignature},
		{"a wrong token", "Push Hook", pushPayload, map[string]string{"X-Gitlab-Token": "wrong"}, http.StatusUnauthorized, receiver.ReasonBadSignature},
		{"a token that is a prefix of the secret", "Push Hook", pushPayload, map[string]string{"X-Gitlab-Token": "s3cret"}, http.StatusUnauthorized, receiver.ReasonBadSignature},
		{"an unknown project", "Push Hook", other, nil, http.StatusUnauthorized, receiver.ReasonUnknownRepository},
		{"no event header", "", pushPayload, map[string]string{"X-Gitlab-Event": ""}, http.StatusBadRequest, receiver.ReasonMissingHeader},
		{"no delivery id", "Push Hook", pushPayload, map[string]string{"X-Gitlab-Event-UUID": ""}, http.StatusBadRequest, receiver.ReasonMissingHeader},
		{"an event sluice does not use", "Pipeline Hook", pushPayload, nil, http.StatusAccepted, receiver.ReasonUnknownEvent},
		{"a title change", "Merge Request Hook", mrPayload("update", "", `{"title":{"previous":"a","current":"b"}}`), nil, http.StatusAccepted, receiver.ReasonIgnoredAction},
		{"labels unchanged", "Merge Request Hook", mrPayload("update", "", labelChange(labels("a"), labels("a"))), nil, http.StatusAccepted, receiver.ReasonIgnoredAction},
		{"a comment on an issue", "Note Hook", issueNote, nil, http.StatusAccepted, receiver.ReasonIgnoredAction},
		{"a payload without the head commit", "Merge Request Hook", strings.Replace(mrPayload("open", "", ""), headSHA, "nope", 1), nil, http.StatusBadRequest, receiver.ReasonMalformed},
		{"a payload without a project", "Push Hook", `{"ref":"refs/heads/main"}`, nil, http.StatusBadRequest, receiver.ReasonMalformed},
		{"a body that is not JSON", "Push Hook", "not json", nil, http.StatusBadRequest, receiver.ReasonMalformed},
		{"a text body", "Push Hook", pushPayload, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, receiver.ReasonBadContentType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder()
			rec := deliver(t, newHandler(t, r), tt.event, tt.body, tt.headers)
			events, counts := r.snapshot()
			if rec.Code != tt.status || counts[tt.reason] != 1 || len(events) != 0 {
				t.Fatalf("answer %d %q, counts %v, %d events; want %d, reason %s, no event", rec.Code, rec.Body.String(), counts, len(events), tt.status, tt.reason)
			}
		})
	}
}

func TestHandler_duplicatesLimitsAndFailures(t *testing.T) {
	r := newRecorder()
	now := time.Date(2030, 12, 1, 10, 0, 0, 0, time.UTC)
	h, err := New(Options{Trigger: r, Secrets: r, Metrics: r, MaxBodyBytes: 2048, DeliveryTTL: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	same := map[string]string{"X-Gitlab-Event-UUID": "d-1"}
	if rec := deliver(t, h, "Push Hook", pushPayload, same); rec.Code != http.StatusOK {
		t.Fatalf("first delivery: %d", rec.Code)
	}
	if rec := deliver(t, h, "Push Hook", pushPayload, same); rec.Code != http.StatusOK {
		t.Fatalf("replay: %d", rec.Code)
	}
	if events, counts := r.snapshot(); counts[receiver.ReasonDuplicate] != 1 || len(events) != 1 {
		t.Fatalf("replay: counts %v, %d events; want one duplicate, one event", counts, len(events))
	}
	// Without X-Gitlab-Event-UUID, Idempotency-Key identifies the delivery.
	byKey := map[string]string{"X-Gitlab-Event-UUID": "", "Idempotency-Key": "d-1"}
	if rec := deliver(t, h, "Push Hook", pushPayload, byKey); rec.Code != http.StatusOK {
		t.Fatalf("by idempotency key: %d", rec.Code)
	}
	if _, counts := r.snapshot(); counts[receiver.ReasonDuplicate] != 2 {
		t.Fatalf("counts %v; want the idempotency key to identify the replay", counts)
	}
	now = now.Add(time.Hour)
	if rec := deliver(t, h, "Push Hook", pushPayload, same); rec.Code != http.StatusOK {
		t.Fatalf("after the time to live: %d", rec.Code)
	}
	if events, _ := r.snapshot(); len(events) != 2 {
		t.Fatalf("%d events; want the delivery accepted again after the time to live", len(events))
	}
	big := `{` + project + `,"pad":"` + strings.Repeat("x", 4096) + `"}`
	if rec := deliver(t, h, "Push Hook", big, nil); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the cap: %d, want 413", rec.Code)
	}
	r.failWith = errors.New("lister down")
	if rec := deliver(t, h, "Push Hook", pushPayload, nil); rec.Code != http.StatusInternalServerError {
		t.Fatalf("a failed secret lookup: %d, want 500", rec.Code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/hooks/gitlab", http.NoBody))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d, want 405", rec.Code)
	}
}

func FuzzDecode(f *testing.F) {
	seeds := []string{mrPayload("open", "", ""), mergedPayload, mrPayload("update", `,"oldrev":"`+mergeSHA+`"`, ""),
		mrPayload("update", "", labelChange(labels("x"), labels("x", "y"))), pushPayload, notePayload, issueNote,
		`{}`, `[]`, `{"project":null}`, `{"project":{"path_with_namespace":"a/b"},"object_attributes":null}`}
	for _, seed := range seeds {
		for _, event := range []string{"Merge Request Hook", "Push Hook", "Note Hook"} {
			f.Add(event, seed)
		}
	}
	f.Fuzz(func(t *testing.T, event, body string) {
		kind, ok := kindOf(event)
		if !ok {
			return
		}
		if _, err := repositoryOf([]byte(body)); err != nil {
			var fe *receiver.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("repositoryOf error %v is not a *receiver.FieldError", err)
			}
		}
		e, handled, err := decode(kind, []byte(body))
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
		if checkPath(e.Repository) != nil || e.Sender == "" {
			t.Fatalf("handled event without a project path or sender: %+v", e)
		}
		if (kind == receiver.KindPullRequest || kind == KindIssueComment) && e.Number <= 0 {
			t.Fatalf("merge request event without a number: %+v", e)
		}
		if e.SHA != "" && !commitid.Valid(e.SHA) || e.MergeCommitSHA != "" && !commitid.Valid(e.MergeCommitSHA) {
			t.Fatalf("event with a malformed SHA: %+v", e)
		}
		if kind == receiver.KindPush && !strings.HasPrefix(e.Ref, "refs/") {
			t.Fatalf("push without a full ref: %+v", e)
		}
	})
}
