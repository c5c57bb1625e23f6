package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kind is a GitHub event name, the X-GitHub-Event header.
type Kind string

// The events the receiver handles.
const (
	// KindPullRequest is a pull request opened, updated, closed or (un)labelled.
	KindPullRequest Kind = "pull_request"
	// KindPush is a branch or tag moved.
	KindPush Kind = "push"
	// KindPing is sent when a webhook is created: it proves the secret and URL are right.
	KindPing Kind = "ping"
)

// The pull_request actions the receiver hands to the Trigger; others are ignored.
const (
	// ActionOpened is a pull request opened.
	ActionOpened = "opened"
	// ActionReopened is a closed pull request opened again.
	ActionReopened = "reopened"
	// ActionSynchronize is new commits pushed to a pull request's head branch.
	ActionSynchronize = "synchronize"
	// ActionClosed is a pull request closed or merged (see Event.Merged).
	ActionClosed = "closed"
	// ActionLabeled is a label added to a pull request.
	ActionLabeled = "labeled"
	// ActionUnlabeled is a label removed from a pull request.
	ActionUnlabeled = "unlabeled"
)

// Event is what a delivery hints at. It is a hint only: the receiver of a Trigger re-reads
// the state it acts on from the SCM API.
type Event struct {
	// Delivery is the X-GitHub-Delivery id.
	Delivery string
	// Kind is the event.
	Kind Kind
	// Action is the pull_request action ("" for push and ping).
	Action string
	// Repository is the repository's full name, "owner/name".
	Repository string
	// Sender is the login of the user whose action caused the delivery ("" if absent).
	Sender string
	// Number is the pull request's number (0 for push and ping).
	Number int
	// SHA is the pull request's head commit, or the commit a push moved Ref to (all zeros when
	// the push deleted Ref); "" for ping.
	SHA string
	// Ref is the pushed ref ("refs/heads/main") or the pull request's base branch ("main").
	Ref string
	// Label is the label added or removed (labeled and unlabeled only).
	Label string
	// Merged tells whether a closed pull request was merged.
	Merged bool
	// MergeCommitSHA is the merge commit of a merged pull request ("" otherwise).
	MergeCommitSHA string
	// HookID is the webhook's id (X-GitHub-Hook-ID, or hook_id of a ping; 0 if absent).
	HookID int64
}

// FieldError is a payload without a field sluice needs, or with a malformed one.
type FieldError struct {
	// Field is the JSON path of the field, e.g. "pull_request.head.sha".
	Field string
	// Problem says what is wrong with it.
	Problem string
}

// Error implements error.
func (e *FieldError) Error() string {
	return fmt.Sprintf("field %s %s", e.Field, e.Problem)
}

// The payload shapes, reduced to what sluice reads.
type (
	payloadUser struct {
		Login string `json:"login"`
	}
	payloadRepository struct {
		FullName string `json:"full_name"`
	}
	payloadRef struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	payloadPull struct {
		Number         int        `json:"number"`
		Head           payloadRef `json:"head"`
		Base           payloadRef `json:"base"`
		Merged         *bool      `json:"merged"`
		MergeCommitSHA *string    `json:"merge_commit_sha"`
	}
	payloadLabel struct {
		Name string `json:"name"`
	}
	// payload is the union of the handled events' fields.
	payload struct {
		Action      string             `json:"action"`
		Number      int                `json:"number"`
		Repository  *payloadRepository `json:"repository"`
		Sender      *payloadUser       `json:"sender"`
		PullRequest *payloadPull       `json:"pull_request"`
		Label       *payloadLabel      `json:"label"`
		Ref         string             `json:"ref"`
		After       string             `json:"after"`
		HookID      int64              `json:"hook_id"`
	}
)

// handledKind tells whether the receiver decodes deliveries of an event.
func handledKind(k Kind) bool {
	return k == KindPullRequest || k == KindPush || k == KindPing
}

// handledAction tells whether a pull_request action is handed to the Trigger.
func handledAction(action string) bool {
	switch action {
	case ActionOpened, ActionReopened, ActionSynchronize, ActionClosed, ActionLabeled, ActionUnlabeled:
		return true
	}
	return false
}

// repositoryOf reads only the repository's full name, to look up the secrets before the
// signature is verified. Its errors are *FieldError.
func repositoryOf(body []byte) (string, error) {
	var p struct {
		Repository *payloadRepository `json:"repository"`
	}
	if err := unmarshal(body, &p); err != nil {
		return "", err
	}
	if p.Repository == nil {
		return "", &FieldError{Field: "repository", Problem: "is missing"}
	}
	if err := checkFullName(p.Repository.FullName); err != nil {
		return "", err
	}
	return p.Repository.FullName, nil
}

// decode reads an event of a handled kind from its JSON payload. Its errors are *FieldError.
// A pull_request action that is not handled decodes without error; the caller ignores it.
func decode(kind Kind, body []byte) (Event, error) {
	var p payload
	if err := unmarshal(body, &p); err != nil {
		return Event{}, err
	}
	if p.Repository == nil {
		return Event{}, &FieldError{Field: "repository", Problem: "is missing"}
	}
	if err := checkFullName(p.Repository.FullName); err != nil {
		return Event{}, err
	}
	e := Event{Kind: kind, Repository: p.Repository.FullName}
	if p.Sender != nil {
		e.Sender = p.Sender.Login
	}
	switch kind {
	case KindPullRequest:
		return decodePull(e, &p)
	case KindPush:
		return decodePush(e, &p)
	case KindPing:
		e.HookID = p.HookID
		return e, nil
	}
	return Event{}, fmt.Errorf("event %q is not handled", kind)
}

func decodePull(e Event, p *payload) (Event, error) {
	if p.Action == "" {
		return Event{}, &FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.Action
	if !handledAction(p.Action) {
		return e, nil
	}
	if p.Sender == nil || p.Sender.Login == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	pr := p.PullRequest
	if pr == nil {
		return Event{}, &FieldError{Field: "pull_request", Problem: "is missing"}
	}
	e.Number = p.Number
	if e.Number == 0 {
		e.Number = pr.Number
	}
	if e.Number <= 0 {
		return Event{}, &FieldError{Field: "number", Problem: "is missing or not positive"}
	}
	if pr.Number != 0 && pr.Number != e.Number {
		return Event{}, &FieldError{Field: "pull_request.number", Problem: fmt.Sprintf("is %d but number is %d", pr.Number, e.Number)}
	}
	if !isSHA(pr.Head.SHA) {
		return Event{}, &FieldError{Field: "pull_request.head.sha", Problem: "is missing or not a commit id"}
	}
	e.SHA, e.Ref = pr.Head.SHA, pr.Base.Ref
	if p.Action == ActionLabeled || p.Action == ActionUnlabeled {
		if p.Label == nil || p.Label.Name == "" {
			return Event{}, &FieldError{Field: "label.name", Problem: "is missing"}
		}
		e.Label = p.Label.Name
	}
	if p.Action == ActionClosed && pr.Merged != nil && *pr.Merged {
		e.Merged = true
		if pr.MergeCommitSHA != nil && *pr.MergeCommitSHA != "" {
			if !isSHA(*pr.MergeCommitSHA) {
				return Event{}, &FieldError{Field: "pull_request.merge_commit_sha", Problem: "is not a commit id"}
			}
			e.MergeCommitSHA = *pr.MergeCommitSHA
		}
	}
	return e, nil
}

func decodePush(e Event, p *payload) (Event, error) {
	if !strings.HasPrefix(p.Ref, "refs/") {
		return Event{}, &FieldError{Field: "ref", Problem: "is missing or not a full ref name"}
	}
	if !isSHA(p.After) {
		return Event{}, &FieldError{Field: "after", Problem: "is missing or not a commit id"}
	}
	if p.Sender == nil || p.Sender.Login == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	e.Ref, e.SHA = p.Ref, p.After
	return e, nil
}

// unmarshal decodes a JSON object, reporting a syntax or type error as a *FieldError.
func unmarshal(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &FieldError{Field: typeErr.Field, Problem: "has the wrong type (" + typeErr.Value + ")"}
		}
		return &FieldError{Field: "(body)", Problem: "is not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return &FieldError{Field: "(body)", Problem: "has data after the JSON object"}
	}
	return nil
}

// checkFullName checks an "owner/name" repository name.
func checkFullName(name string) error {
	owner, repo, ok := strings.Cut(name, "/")
	if name == "" {
		return &FieldError{Field: "repository.full_name", Problem: "is missing"}
	}
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") || strings.ContainsAny(name, " \t\r\n") {
		return &FieldError{Field: "repository.full_name", Problem: fmt.Sprintf("is %q, not owner/name", name)}
	}
	return nil
}

// isSHA tells whether s is a full SHA-1 or SHA-256 commit id in lower-case hex.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
