package receiver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/githubfake"
)

const (
	headSHA  = "1111111111111111111111111111111111111111"
	mergeSHA = "2222222222222222222222222222222222222222"
	afterSHA = "3333333333333333333333333333333333333333"
)

var (
	secret      = []byte("s3cret")
	otherSecret = []byte("another")
)

// labeledJSON is a pull_request labeled payload with the fields sluice reads.
func labeledJSON(repo string) string {
	return fmt.Sprintf(`{"action":"labeled","number":7,"repository":{"full_name":%q},"sender":{"login":"carol"},`+
		`"pull_request":{"number":7,"head":{"ref":"feature","sha":%q},"base":{"ref":"main","sha":%q},"merged":false,"merge_commit_sha":null},`+
		`"label":{"name":"sluice/approve"}}`, repo, headSHA, afterSHA)
}

// delivery is one request to the handler.
type delivery struct {
	method, contentType, event, id, signature string
	body                                      string
	unknownLength                             bool
}

// signed is a JSON delivery of event signed with key.
func signed(event, id, body string, key []byte) delivery {
	return delivery{method: http.MethodPost, contentType: "application/json", event: event, id: id, body: body, signature: githubfake.Sign(key, []byte(body))}
}

func (d delivery) request() *http.Request {
	r := httptest.NewRequest(d.method, "/hook/github", strings.NewReader(d.body))
	if d.contentType != "" {
		r.Header.Set("Content-Type", d.contentType)
	}
	if d.unknownLength {
		r.ContentLength = -1
	}
	for k, v := range map[string]string{headerEvent: d.event, headerDelivery: d.id, headerSignature: d.signature} {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	return r
}

// harness is a handler with recording fakes and a settable clock.
type harness struct {
	handler *Handler
	trigger *triggered
	metrics *counted
	now     time.Time
}

// harnessSecrets are the secrets of the harness: acme/app's, acme/shared's (two, one shared
// with acme/app) and acme/empty's (empty, never matching).
var harnessSecrets = secretMap{"acme/app": {secret}, "acme/shared": {otherSecret, secret}, "acme/empty": {{}}}

func newHarness(t *testing.T, maxBody int64) *harness {
	t.Helper()
	return newHarnessWith(t, maxBody, harnessSecrets)
}

func newHarnessWith(t *testing.T, maxBody int64, secrets SecretList) *harness {
	t.Helper()
	h := &harness{trigger: &triggered{}, metrics: &counted{}, now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	handler, err := New(Options{
		Trigger:      h.trigger,
		Secrets:      secrets,
		Metrics:      h.metrics,
		MaxBodyBytes: maxBody,
		DeliveryTTL:  time.Hour,
		Now:          func() time.Time { return h.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.handler = handler
	return h
}

func (h *harness) send(d delivery) (int, string) {
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, d.request())
	return rec.Code, rec.Body.String()
}

func TestHandler_rejectsWithoutSideEffect(t *testing.T) {
	good := labeledJSON("acme/app")
	withBody := func(body string) delivery { return signed("pull_request", "d-1", body, secret) }
	tests := []struct {
		name        string
		delivery    delivery
		wantStatus  int
		wantOutcome string
		wantMessage string
	}{
		{"GET", func() delivery { d := withBody(good); d.method = http.MethodGet; return d }(), 405, "rejected/bad-method", "only POST"},
		{"text body", func() delivery { d := withBody(good); d.contentType = "text/plain"; return d }(), 415, "rejected/bad-content-type", "application/json"},
		{"no content type", func() delivery { d := withBody(good); d.contentType = ""; return d }(), 415, "rejected/bad-content-type", "content type"},
		{"oversized, announced", withBody(good + strings.Repeat(" ", 2048)), 413, "rejected/too-large", "larger than 1024 bytes"},
		{"oversized, chunked", func() delivery { d := withBody(good + strings.Repeat(" ", 2048)); d.unknownLength = true; return d }(), 413, "rejected/too-large", "larger than 1024 bytes"},
		{"no event header", func() delivery { d := withBody(good); d.event = ""; return d }(), 400, "rejected/missing-header", "X-GitHub-Event"},
		{"no delivery header", func() delivery { d := withBody(good); d.id = ""; return d }(), 400, "rejected/missing-header", "X-GitHub-Delivery"},
		{"no signature", func() delivery { d := withBody(good); d.signature = ""; return d }(), 401, "rejected/missing-signature", "X-Hub-Signature-256 is missing"},
		{"SHA-1 signature only", func() delivery {
			d := withBody(good)
			d.signature = "sha1=0123456789012345678901234567890123456789"
			return d
		}(), 401, "rejected/missing-signature", "not sha256="},
		{"signature not hex", func() delivery { d := withBody(good); d.signature = "sha256=" + strings.Repeat("zz", 32); return d }(), 401, "rejected/missing-signature", "not sha256="},
		{"unsigned unknown event", func() delivery { d := withBody(good); d.event = "issues"; d.signature = ""; return d }(), 401, "rejected/missing-signature", "missing"},
		{"signed with another secret", signed("pull_request", "d-1", good, otherSecret), 401, "rejected/bad-signature", "does not match"},
		{"signature of another body", func() delivery { d := withBody(good); d.body = strings.Replace(good, "carol", "mallory", 1); return d }(), 401, "rejected/bad-signature", "does not match"},
		{"repository without a secret, signed with another repository's", signed("pull_request", "d-1", labeledJSON("evil/app"), secret), 401, "rejected/unknown-repository", `"evil/app"`},
		{"repository with an empty secret", signed("pull_request", "d-1", labeledJSON("acme/empty"), nil), 401, "rejected/bad-signature", "does not match"},
		{"garbage with a bad signature is not parsed", signed("pull_request", "d-1", `{"action":`, []byte("forger")), 401, "rejected/bad-signature", "does not match"},
		{"not JSON", withBody(`{"action":`), 400, "rejected/malformed", "(body) is not a JSON object"},
		{"JSON array", withBody(`[1,2]`), 400, "rejected/malformed", "not a JSON object"},
		{"two objects", withBody(good + `{}`), 400, "rejected/malformed", "data after the JSON object"},
		{"no repository", withBody(`{"action":"labeled"}`), 400, "rejected/malformed", "field repository is missing"},
		{"repository not owner/name", withBody(strings.Replace(good, `"acme/app"`, `"acme"`, 1)), 400, "rejected/malformed", "repository.full_name"},
		{"number of wrong type", withBody(strings.Replace(good, `"number":7,"repository"`, `"number":"7","repository"`, 1)), 400, "rejected/malformed", "field number has the wrong type"},
		{"no head sha", withBody(strings.Replace(good, headSHA, "", 1)), 400, "rejected/malformed", "pull_request.head.sha"},
		{"short head sha", withBody(strings.Replace(good, headSHA, "1111111", 1)), 400, "rejected/malformed", "pull_request.head.sha"},
		{"labeled without label", withBody(strings.Replace(good, `"label":{"name":"sluice/approve"}`, `"label":null`, 1)), 400, "rejected/malformed", "label.name"},
		{"no sender", withBody(strings.Replace(good, `"sender":{"login":"carol"},`, ``, 1)), 400, "rejected/malformed", "sender.login"},
		{"no number", withBody(strings.NewReplacer(`"number":7,"repository"`, `"repository"`, `"pull_request":{"number":7,`, `"pull_request":{`).Replace(good)), 400, "rejected/malformed", "field number is missing"},
		{"push without after", signed("push", "d-1", `{"ref":"refs/heads/main","repository":{"full_name":"acme/app"},"sender":{"login":"bob"}}`, secret), 400, "rejected/malformed", "field after"},
		{"push with a short ref", signed("push", "d-1", `{"ref":"main","after":"`+afterSHA+`","repository":{"full_name":"acme/app"},"sender":{"login":"bob"}}`, secret), 400, "rejected/malformed", "field ref"},
		{"form without payload", func() delivery {
			body := "other=1"
			return delivery{method: http.MethodPost, contentType: "application/x-www-form-urlencoded", event: "pull_request", id: "d-1", body: body, signature: githubfake.Sign(secret, []byte(body))}
		}(), 400, "rejected/malformed", "payload is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 1024)
			status, body := h.send(tt.delivery)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantMessage) {
				t.Errorf("answer = %d %q, want %d containing %q", status, body, tt.wantStatus, tt.wantMessage)
			}
			if got := h.trigger.all(); len(got) != 0 {
				t.Errorf("a rejected delivery triggered %+v", got)
			}
			if got := h.metrics.all(); !reflect.DeepEqual(got, []string{tt.wantOutcome}) {
				t.Errorf("counted %v, want [%s]", got, tt.wantOutcome)
			}
			if h.handler.seen.len() != 0 {
				t.Error("a rejected delivery id was remembered")
			}
		})
	}
}

func TestHandler_secretStoreFailuresRejectWithoutSideEffect(t *testing.T) {
	tests := []struct {
		name        string
		secrets     SecretList
		wantStatus  int
		wantOutcome string
		wantMessage string
	}{
		{"no secret configured at all", secretMap{}, 401, "rejected/unknown-repository", "no webhook secret is configured"},
		{"secret lookup fails", brokenSecrets{}, 500, "rejected/secret-lookup-failed", "looking up the webhook secret failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, 0, tt.secrets)
			status, body := h.send(signed("pull_request", "d-1", labeledJSON("acme/app"), secret))
			if status != tt.wantStatus || !strings.Contains(body, tt.wantMessage) {
				t.Errorf("answer = %d %q, want %d containing %q", status, body, tt.wantStatus, tt.wantMessage)
			}
			if got := h.trigger.all(); len(got) != 0 {
				t.Errorf("a rejected delivery triggered %+v", got)
			}
			if got := h.metrics.all(); !reflect.DeepEqual(got, []string{tt.wantOutcome}) {
				t.Errorf("counted %v, want [%s]", got, tt.wantOutcome)
			}
		})
	}
}

// A secret rotated since the last read: the first signature matches none of the remembered
// secrets, so the handler asks once for a fresh list, and the delivery is accepted. A forged
// delivery asks for a fresh list too, and is refused.
func TestHandler_rotatedSecret_refreshesOnceAndAccepts(t *testing.T) {
	store := &rotatingSecrets{stale: secretMap{"acme/app": {otherSecret}}, fresh: secretMap{"acme/app": {secret}}}
	h := newHarnessWith(t, 0, store)
	if status, body := h.send(signed("pull_request", "d-1", labeledJSON("acme/app"), secret)); status != http.StatusOK {
		t.Fatalf("answer = %d %q, want 200", status, body)
	}
	if store.reads != 2 || store.refreshs != 1 {
		t.Errorf("%d lookups with %d refreshes, want 2 with 1", store.reads, store.refreshs)
	}
	// A delivery that matches the remembered secrets asks for nothing fresh.
	if status, _ := h.send(signed("pull_request", "d-2", labeledJSON("acme/app"), secret)); status != http.StatusOK {
		t.Fatalf("second delivery answered %d, want 200", status)
	}
	if store.reads != 3 || store.refreshs != 1 {
		t.Errorf("%d lookups with %d refreshes, want 3 with 1", store.reads, store.refreshs)
	}
	if status, _ := h.send(signed("pull_request", "d-3", labeledJSON("acme/app"), []byte("forger"))); status != http.StatusUnauthorized {
		t.Fatalf("forged delivery answered %d, want 401", status)
	}
	if got := len(h.trigger.all()); got != 2 {
		t.Errorf("triggered %d times, want 2", got)
	}
}

// A FallibleTrigger that cannot hand a delivery on: the delivery is answered 503 and its id
// forgotten, so that GitHub's redelivery is accepted rather than ignored as a duplicate.
func TestHandler_triggerFails_answers503AndRedeliveryCounts(t *testing.T) {
	trigger := &failingTrigger{fail: 1}
	handler, err := New(Options{Trigger: trigger, Secrets: harnessSecrets})
	if err != nil {
		t.Fatal(err)
	}
	send := func() (int, string) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, signed("pull_request", "d-1", labeledJSON("acme/app"), secret).request())
		return rec.Code, rec.Body.String()
	}
	if status, body := send(); status != http.StatusServiceUnavailable || !strings.Contains(body, "redeliver") {
		t.Fatalf("answer = %d %q, want 503 saying to redeliver", status, body)
	}
	if status, body := send(); status != http.StatusOK || body != "accepted\n" {
		t.Fatalf("redelivery answered %d %q, want 200 accepted", status, body)
	}
	if got := trigger.all(); len(got) != 1 || got[0].Delivery != "d-1" {
		t.Errorf("triggered %+v, want d-1 once", got)
	}
}

func TestHandler_ignoresUnusedEventsAndActions(t *testing.T) {
	tests := []struct {
		name, event, body, wantOutcome, wantMessage string
	}{
		{"issues event", "issues", `{"action":"opened"}`, "rejected/unknown-event", `event "issues" is not used`},
		{"check_run created", "check_run", checkRunJSON("created", "approve-1"), "rejected/ignored-action", `check_run action "created" is not used`},
		{"pull_request edited", "pull_request", strings.Replace(labeledJSON("acme/app"), `"labeled"`, `"edited"`, 1), "rejected/ignored-action", `action "edited" is not used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 0)
			status, body := h.send(signed(tt.event, "d-1", tt.body, secret))
			if status != http.StatusAccepted || !strings.Contains(body, tt.wantMessage) {
				t.Errorf("answer = %d %q, want 202 containing %q", status, body, tt.wantMessage)
			}
			if got := h.trigger.all(); len(got) != 0 {
				t.Errorf("an ignored delivery triggered %+v", got)
			}
			if got := h.metrics.all(); !reflect.DeepEqual(got, []string{tt.wantOutcome}) {
				t.Errorf("counted %v, want [%s]", got, tt.wantOutcome)
			}
		})
	}
}

func TestHandler_acceptsHandledEvents(t *testing.T) {
	closed := fmt.Sprintf(`{"action":"closed","number":7,"repository":{"full_name":"acme/app"},"sender":{"login":"dave"},`+
		`"pull_request":{"number":7,"head":{"sha":%q},"base":{"ref":"main"},"merged":true,"merge_commit_sha":%q}}`, headSHA, mergeSHA)
	push := fmt.Sprintf(`{"ref":"refs/heads/main","before":%q,"after":%q,"repository":{"full_name":"acme/shared"},"sender":{"login":"bob"}}`, headSHA, afterSHA)
	ping := `{"zen":"Keep it logically awesome.","hook_id":42,"repository":{"full_name":"acme/app"},"sender":{"login":"acme"}}`
	form := "payload=" + url.QueryEscape(labeledJSON("acme/app"))
	tests := []struct {
		name     string
		delivery delivery
		want     Event
	}{
		{"labeled", signed("pull_request", "d-1", labeledJSON("acme/app"), secret),
			Event{Delivery: "d-1", Kind: KindPullRequest, Action: "labeled", Repository: "acme/app", Sender: "carol", Number: 7, SHA: headSHA, Ref: "main", Label: "sluice/approve"}},
		{"unlabeled", signed("pull_request", "d-2", strings.Replace(labeledJSON("acme/app"), `"labeled"`, `"unlabeled"`, 1), secret),
			Event{Delivery: "d-2", Kind: KindPullRequest, Action: "unlabeled", Repository: "acme/app", Sender: "carol", Number: 7, SHA: headSHA, Ref: "main", Label: "sluice/approve"}},
		{"synchronize", signed("pull_request", "d-3", strings.Replace(labeledJSON("acme/app"), `"labeled"`, `"synchronize"`, 1), secret),
			Event{Delivery: "d-3", Kind: KindPullRequest, Action: "synchronize", Repository: "acme/app", Sender: "carol", Number: 7, SHA: headSHA, Ref: "main"}},
		{"merged", signed("pull_request", "d-4", closed, secret),
			Event{Delivery: "d-4", Kind: KindPullRequest, Action: "closed", Repository: "acme/app", Sender: "dave", Number: 7, SHA: headSHA, Ref: "main", Merged: true, MergeCommitSHA: mergeSHA}},
		{"push, second secret of the repository", signed("push", "d-5", push, secret),
			Event{Delivery: "d-5", Kind: KindPush, Repository: "acme/shared", Sender: "bob", SHA: afterSHA, Ref: "refs/heads/main"}},
		{"ping", signed("ping", "d-6", ping, secret),
			Event{Delivery: "d-6", Kind: KindPing, Repository: "acme/app", Sender: "acme", HookID: 42}},
		{"form-encoded labeled", delivery{method: http.MethodPost, contentType: "application/x-www-form-urlencoded", event: "pull_request", id: "d-7", body: form, signature: githubfake.Sign(secret, []byte(form))},
			Event{Delivery: "d-7", Kind: KindPullRequest, Action: "labeled", Repository: "acme/app", Sender: "carol", Number: 7, SHA: headSHA, Ref: "main", Label: "sluice/approve"}},
		{"JSON with charset", func() delivery {
			d := signed("pull_request", "d-8", labeledJSON("acme/app"), secret)
			d.contentType = "application/json; charset=utf-8"
			return d
		}(), Event{Delivery: "d-8", Kind: KindPullRequest, Action: "labeled", Repository: "acme/app", Sender: "carol", Number: 7, SHA: headSHA, Ref: "main", Label: "sluice/approve"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 0)
			status, body := h.send(tt.delivery)
			if status != http.StatusOK || body != "accepted\n" {
				t.Fatalf("answer = %d %q, want 200 accepted", status, body)
			}
			if got := h.trigger.all(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("triggered %+v, want [%+v]", got, tt.want)
			}
			if got := h.metrics.all(); len(got) != 1 || !strings.HasPrefix(got[0], "accepted/") {
				t.Errorf("counted %v, want one Accepted", got)
			}
		})
	}
}

func TestHandler_replayedDeliveryTriggersOnce(t *testing.T) {
	h := newHarness(t, 0)
	body := labeledJSON("acme/app")

	// Given a delivery whose first attempt carried a wrong signature (rejected, not remembered),
	forged := signed("pull_request", "d-1", body, otherSecret)
	if status, _ := h.send(forged); status != http.StatusUnauthorized {
		t.Fatalf("forged delivery answered %d, want 401", status)
	}
	// when the genuine delivery with that id arrives, it is accepted;
	if status, _ := h.send(signed("pull_request", "d-1", body, secret)); status != http.StatusOK || len(h.trigger.all()) != 1 {
		t.Fatalf("genuine delivery answered %d and triggered %d times, want 200 and 1", status, len(h.trigger.all()))
	}
	// when it is replayed, it is acknowledged but triggers nothing;
	for i := 0; i < 3; i++ {
		status, answer := h.send(signed("pull_request", "d-1", body, secret))
		if status != http.StatusOK || answer != "duplicate delivery, ignored\n" {
			t.Fatalf("replay %d answered %d %q, want 200 duplicate", i, status, answer)
		}
	}
	if n := len(h.trigger.all()); n != 1 {
		t.Fatalf("triggered %d times after replays, want 1", n)
	}
	// and a new delivery id is accepted.
	if status, _ := h.send(signed("pull_request", "d-2", body, secret)); status != http.StatusOK || len(h.trigger.all()) != 2 {
		t.Fatalf("a new delivery answered %d, triggered %d times; want 200 and 2", status, len(h.trigger.all()))
	}
	// After the time to live the id is forgotten: a redelivery is a new hint.
	h.now = h.now.Add(time.Hour + time.Second)
	if status, answer := h.send(signed("pull_request", "d-1", body, secret)); status != http.StatusOK || answer != "accepted\n" {
		t.Fatalf("a redelivery after the TTL answered %d %q, want 200 accepted", status, answer)
	}
	want := []string{"rejected/bad-signature", "accepted/pull_request", "rejected/duplicate", "rejected/duplicate", "rejected/duplicate", "accepted/pull_request", "accepted/pull_request"}
	if got := h.metrics.all(); !reflect.DeepEqual(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

func TestNew_requiresTriggerAndSecrets(t *testing.T) {
	if _, err := New(Options{Secrets: secretMap{}}); err == nil {
		t.Error("New without a Trigger succeeded")
	}
	if _, err := New(Options{Trigger: &triggered{}}); err == nil {
		t.Error("New without Secrets succeeded")
	}
	h, err := New(Options{Trigger: &triggered{}, Secrets: secretMap{}})
	if err != nil {
		t.Fatal(err)
	}
	if h.maxBody != DefaultMaxBodyBytes || h.seen.capacity != DefaultMaxDeliveries || h.seen.ttl != DefaultDeliveryTTL {
		t.Errorf("defaults = %d, %d, %s", h.maxBody, h.seen.capacity, h.seen.ttl)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(nil)))
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("a handler without Metrics answered %d, want 415", rec.Code)
	}
}

// FuzzHandler sends arbitrary signed or unsigned bodies: the handler must never panic, answer
// with a status from its contract, and trigger only authentic, well-formed deliveries.
func FuzzHandler(f *testing.F) {
	f.Add("pull_request", labeledJSON("acme/app"), true, "application/json")
	f.Add("push", `{"ref":"refs/heads/main","after":"`+afterSHA+`","repository":{"full_name":"acme/app"},"sender":{"login":"b"}}`, true, "application/json")
	f.Add("ping", `{"repository":{"full_name":"acme/app"}}`, false, "application/json")
	f.Add("pull_request", "payload="+url.QueryEscape(labeledJSON("acme/app")), true, "application/x-www-form-urlencoded")
	f.Add("issues", `{}`, true, "text/plain")
	f.Add("check_run", checkRunJSON("requested_action", "approve-1"), true, "application/json")
	f.Add("pull_request", labeledJSON("acme/apP"), true, "application/json") // GitHub's names ignore case
	allowed := map[int]bool{200: true, 202: true, 400: true, 401: true, 405: true, 413: true, 415: true, 500: true}
	f.Fuzz(func(t *testing.T, event, body string, sign bool, contentType string) {
		h := newHarness(t, 4096)
		d := delivery{method: http.MethodPost, contentType: contentType, event: event, id: "d-1", body: body}
		if sign {
			d.signature = githubfake.Sign(secret, []byte(body))
		}
		status, answer := h.send(d)
		if !allowed[status] || answer == "" {
			t.Fatalf("answer %d %q", status, answer)
		}
		triggered := h.trigger.all()
		if len(triggered) > 0 && (!sign || status != http.StatusOK || answer != "accepted\n") {
			t.Fatalf("triggered %+v with signed=%v and answer %d %q", triggered, sign, status, answer)
		}
		if len(triggered) == 1 && !strings.EqualFold(triggered[0].Repository, "acme/app") && !strings.EqualFold(triggered[0].Repository, "acme/shared") {
			t.Fatalf("triggered an event of repository %q, which has no secret", triggered[0].Repository)
		}
	})
}
