package githubfake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// webhookResource names the embedded webhook schemas for the JSON Schema compiler.
const webhookResource = "https://githubfake.invalid/webhooks.json"

// Delivery is a webhook delivery the fake sent.
type Delivery struct {
	// ID is the X-GitHub-Delivery GUID.
	ID string
	// Event is the X-GitHub-Event name (pull_request, push, ping, issue_comment, pull_request_review).
	Event string
	// Body is the exact payload sent (what the signature covers).
	Body []byte
	// Signature is the X-Hub-Signature-256 header.
	Signature string
	// Status is the receiver's HTTP answer.
	Status int
}

// webhooks builds and validates webhook payloads against @octokit/webhooks-schemas.
type webhooks struct {
	once     sync.Once
	err      error
	schemas  map[string]*openapi3.Schema // definition -> schema, for skeletons
	mu       sync.Mutex                  // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

func (w *webhooks) load() error {
	w.once.Do(func() {
		var raw map[string]any
		if w.err = json.Unmarshal(webhookSchemas, &raw); w.err != nil {
			return
		}
		// The skeletons reuse the OpenAPI schema model: the draft-07 definitions become
		// components of a document, their references rewritten to match.
		defs, _ := json.Marshal(raw["definitions"])
		defs = bytes.ReplaceAll(defs, []byte(`"#/definitions/`), []byte(`"#/components/schemas/`))
		doc := fmt.Sprintf(`{"openapi":"3.0.3","info":{"title":"webhooks","version":"1"},"paths":{},"components":{"schemas":%s}}`, defs)
		loader := openapi3.NewLoader()
		t, err := loader.LoadFromData([]byte(doc))
		if err != nil {
			w.err = fmt.Errorf("loading the webhook schemas: %w", err)
			return
		}
		w.schemas = map[string]*openapi3.Schema{}
		for name, ref := range t.Components.Schemas {
			w.schemas[name] = ref.Value
		}
		instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(webhookSchemas))
		if err != nil {
			w.err = err
			return
		}
		w.compiler = jsonschema.NewCompiler()
		w.compiler.AssertFormat()
		if w.err = w.compiler.AddResource(webhookResource, instance); w.err != nil {
			return
		}
		w.compiled = map[string]*jsonschema.Schema{}
	})
	return w.err
}

// build fills values over the skeleton of a definition and validates the result.
func (w *webhooks) build(definition string, values map[string]any) ([]byte, error) {
	if err := w.load(); err != nil {
		return nil, err
	}
	schema := w.schemas[definition]
	if schema == nil {
		return nil, fmt.Errorf("no webhook schema %q", definition)
	}
	body, err := json.Marshal(fillObject(schema, values, 0))
	if err != nil {
		return nil, err
	}
	return body, w.validate(definition, body)
}

// validate checks a payload against a definition of @octokit/webhooks-schemas.
func (w *webhooks) validate(definition string, body []byte) error {
	if err := w.load(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	sch := w.compiled[definition]
	if sch == nil {
		var err error
		if sch, err = w.compiler.Compile(webhookResource + "#/definitions/" + definition); err != nil {
			return err
		}
		w.compiled[definition] = sch
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	if err := sch.Validate(instance); err != nil {
		return fmt.Errorf("webhook payload does not match %s: %w", definition, err)
	}
	return nil
}

// Sign returns the X-Hub-Signature-256 of body with secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	_, _ = mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// DeliverLabel sends a pull_request "labeled" (added true) or "unlabeled" delivery for a label
// of a pull request, sent by sender, to url signed with secret.
func (s *Server) DeliverLabel(ctx context.Context, url string, secret []byte, fullName string, number int, label, sender string, added bool) (Delivery, error) {
	action := "unlabeled"
	if added {
		action = "labeled"
	}
	s.mu.Lock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	if pr == nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("no pull request #%d", number)
	}
	pull := s.pullJSON(r, pr)
	pull["merged"], pull["merged_by"], pull["mergeable"], pull["rebaseable"] = pr.merged, s.userOrNil(pr.mergedBy), nil, nil
	pull["comments"], pull["review_comments"], pull["commits"], pull["additions"], pull["deletions"], pull["changed_files"] = 0, 0, 1, 1, 1, 1
	pull["requested_reviewers"], pull["requested_teams"], pull["assignees"] = []any{}, []any{}, []any{}
	repo, user := s.repoJSON(r), s.user(sender)
	s.mu.Unlock()
	values := map[string]any{
		"action":       action,
		"number":       number,
		"pull_request": pull,
		"label":        map[string]any{"id": 1, "node_id": "LA_" + label, "url": s.apiURL("repos/%s/labels/%s", fullName, label), "name": label, "color": "ededed", "default": false, "description": nil},
		"repository":   repo,
		"sender":       user,
	}
	body, err := s.hooks.build("pull_request$"+action, values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "pull_request", body)
}

// DeliverPush sends a push delivery of branch moving from before to after.
func (s *Server) DeliverPush(ctx context.Context, url string, secret []byte, fullName, branch, before, after, sender string) (Delivery, error) {
	s.mu.Lock()
	r := s.mustRepo(fullName)
	var commits []any
	var head any
	if c := r.commits[after]; c != nil {
		commit := map[string]any{
			"id": c.SHA, "tree_id": c.Tree, "distinct": true, "message": c.Message, "timestamp": stamp(c.Author.When),
			"url":       s.htmlRoot() + fullName + "/commit/" + c.SHA,
			"author":    map[string]any{"name": c.Author.Name, "email": c.Author.Email},
			"committer": map[string]any{"name": c.Committer.Name, "email": c.Committer.Email},
			"added":     []any{}, "removed": []any{}, "modified": []any{},
		}
		commits, head = []any{commit}, commit
	}
	repo := s.repoJSON(r)
	repo["created_at"], repo["pushed_at"] = 0, 0
	user := s.user(sender)
	s.mu.Unlock()
	if commits == nil {
		commits = []any{}
	}
	values := map[string]any{
		"ref": "refs/heads/" + branch, "before": before, "after": after,
		"created": before == strings.Repeat("0", 40), "deleted": after == strings.Repeat("0", 40), "forced": false,
		"base_ref": nil, "compare": s.htmlRoot() + fullName + "/compare/" + before + "..." + after,
		"commits": commits, "head_commit": head,
		"repository": repo, "pusher": map[string]any{"name": sender, "email": sender + "@users.invalid"}, "sender": user,
	}
	body, err := s.hooks.build("push$event", values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "push", body)
}

// DeliverPing sends the ping GitHub sends when a webhook is created.
func (s *Server) DeliverPing(ctx context.Context, url string, secret []byte, fullName string, hookID int64) (Delivery, error) {
	s.mu.Lock()
	repo := s.repoJSON(s.mustRepo(fullName))
	owner := s.user(strings.Split(fullName, "/")[0])
	s.mu.Unlock()
	values := map[string]any{
		"zen":     "Keep it logically awesome.",
		"hook_id": hookID,
		"hook": map[string]any{
			"id": hookID, "type": "Repository", "name": "web", "active": true, "events": []any{"pull_request", "push"},
			"config":     map[string]any{"url": url, "content_type": "json", "insecure_ssl": "0"},
			"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
		},
		"repository": repo,
		"sender":     owner,
	}
	body, err := s.hooks.build("ping$event", values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "ping", body)
}

// Redeliver sends a delivery again, with the same id and body (as GitHub's "Redeliver" does).
func (s *Server) Redeliver(ctx context.Context, url string, secret []byte, d Delivery) (Delivery, error) {
	return s.sendAs(ctx, url, secret, d.Event, d.ID, d.Body)
}

func (s *Server) send(ctx context.Context, url string, secret []byte, event string, body []byte) (Delivery, error) {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return Delivery{}, err
	}
	id := fmt.Sprintf("%x-%x-%x-%x-%x", buf[0:4], buf[4:6], buf[6:8], buf[8:10], buf[10:16])
	return s.sendAs(ctx, url, secret, event, id, body)
}

func (s *Server) sendAs(ctx context.Context, url string, secret []byte, event, id string, body []byte) (Delivery, error) {
	d := Delivery{ID: id, Event: event, Body: body, Signature: Sign(secret, body)}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return d, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/githubfake")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-GitHub-Hook-ID", "1")
	req.Header.Set("X-Hub-Signature-256", d.Signature)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return d, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	d.Status = resp.StatusCode
	return d, nil
}
