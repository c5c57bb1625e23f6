package notification_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	"github.com/sluice-dev/sluice/notification/sink/slack"
	"github.com/sluice-dev/sluice/notification/sink/webhook"
)

// receiver is a webhook receiver as a user would write one: it refuses
// requests whose signature does not verify, answers 503 to the first
// failFirst requests, and keeps each delivery once, by its key.
type receiver struct {
	*httptest.Server
	secret []byte

	mu        sync.Mutex
	failFirst int
	// loseFirst answers 500 to the first loseFirst deliveries it keeps,
	// as if the answer were lost on the way back.
	loseFirst int
	lost      int
	requests  int
	refused   int
	byKey     map[string]int
	received  []notificationv1alpha1.Notification
}

func newReceiver(t *testing.T, secret string, failFirst int) *receiver {
	r := &receiver{secret: []byte(secret), failFirst: failFirst, byKey: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if !webhook.Verify(r.secret, body, req.Header.Get(webhook.HeaderSignature)) {
		r.refused++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if r.requests <= r.failFirst {
		http.Error(w, "not now", http.StatusServiceUnavailable)
		return
	}
	key := req.Header.Get(webhook.HeaderDelivery)
	r.byKey[key]++
	if r.byKey[key] > 1 {
		return // a repeat: de-duplicated
	}
	var n notificationv1alpha1.Notification
	if err := json.Unmarshal(body, &n); err != nil || n.Key != key || string(n.Event) != req.Header.Get(webhook.HeaderEvent) {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.received = append(r.received, n)
	if r.lost < r.loseFirst {
		r.lost++
		http.Error(w, "answer lost", http.StatusInternalServerError)
		return
	}
}

// events are the distinct notifications received, by event.
func (r *receiver) events() map[notificationv1alpha1.Event][]notificationv1alpha1.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[notificationv1alpha1.Event][]notificationv1alpha1.Notification{}
	for _, n := range r.received {
		out[n.Event] = append(out[n.Event], n)
	}
	return out
}

func (r *receiver) counts() (requests, refused int, byKey map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]int{}
	for k, v := range r.byKey {
		m[k] = v
	}
	return r.requests, r.refused, m
}

// chat is a Slack-compatible incoming webhook: it keeps the payloads.
type chat struct {
	*httptest.Server
	mu       sync.Mutex
	payloads []slack.Payload
}

func newChat(t *testing.T) *chat {
	c := &chat{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p slack.Payload
		if err := json.NewDecoder(req.Body).Decode(&p); err != nil || p.Text == "" {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.payloads = append(c.payloads, p)
		c.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *chat) texts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.payloads {
		out = append(out, p.Text)
	}
	return out
}

// newStats serves body as JSON.
func newStats(t *testing.T, body string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}
