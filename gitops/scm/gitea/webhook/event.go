package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/receiver"
)

// KindIssueComment is a comment created, edited or deleted on a pull request: Gitea's
// issue_comment event (its pull_request_comment webhook events are delivered as it too).
const KindIssueComment receiver.Kind = "issue_comment"

// Gitea's pull_request actions that differ from GitHub's.
const (
	giteaSynchronized = "synchronized"
	giteaLabelUpdated = "label_updated"
	giteaLabelCleared = "label_cleared"
)

// The payload shapes, reduced to what sluice reads. Gitea's users carry "login" (and
// "username"; login is read).
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
		Merged         bool       `json:"merged"`
		MergeCommitSHA *string    `json:"merge_commit_sha"`
	}
	payloadIssue struct {
		Number      int       `json:"number"`
		PullRequest *struct{} `json:"pull_request"`
	}
	// payload is the union of the handled events' fields.
	payload struct {
		Action      string             `json:"action"`
		Number      int                `json:"number"`
		Repository  *payloadRepository `json:"repository"`
		Sender      *payloadUser       `json:"sender"`
		PullRequest *payloadPull       `json:"pull_request"`
		Issue       *payloadIssue      `json:"issue"`
		IsPull      bool               `json:"is_pull"`
		Ref         string             `json:"ref"`
		After       string             `json:"after"`
	}
)

// handledKind tells whether deliveries of an event are decoded.
func handledKind(k receiver.Kind) bool {
	return k == receiver.KindPullRequest || k == receiver.KindPush || k == KindIssueComment
}

// pullAction maps a Gitea pull_request action to the receiver's; ok is false for the actions
// sluice does not use.
func pullAction(action string) (string, bool) {
	switch action {
	case receiver.ActionOpened, receiver.ActionReopened, receiver.ActionClosed:
		return action, true
	case giteaSynchronized:
		return receiver.ActionSynchronize, true
	case giteaLabelUpdated:
		return receiver.ActionLabeled, true
	case giteaLabelCleared:
		return receiver.ActionUnlabeled, true
	}
	return action, false
}

// repositoryOf reads only the repository's full name, to look up the secrets before the
// signature is verified. Its errors are *receiver.FieldError.
func repositoryOf(body []byte) (string, error) {
	var p struct {
		Repository *payloadRepository `json:"repository"`
	}
	if err := unmarshal(body, &p); err != nil {
		return "", err
	}
	if p.Repository == nil {
		return "", &receiver.FieldError{Field: "repository", Problem: "is missing"}
	}
	if err := checkFullName(p.Repository.FullName); err != nil {
		return "", err
	}
	return p.Repository.FullName, nil
}

// decode reads an event of a handled kind from its JSON payload. handled is false for an action
// (or a comment on an issue) sluice does not use; the Event then carries only the action. Its
// errors are *receiver.FieldError.
func decode(kind receiver.Kind, body []byte) (e receiver.Event, handled bool, err error) {
	var p payload
	if err := unmarshal(body, &p); err != nil {
		return receiver.Event{}, false, err
	}
	if p.Repository == nil {
		return receiver.Event{}, false, &receiver.FieldError{Field: "repository", Problem: "is missing"}
	}
	if err := checkFullName(p.Repository.FullName); err != nil {
		return receiver.Event{}, false, err
	}
	e = receiver.Event{Kind: kind, Repository: p.Repository.FullName}
	if p.Sender != nil {
		e.Sender = p.Sender.Login
	}
	switch kind {
	case receiver.KindPullRequest:
		return decodePull(e, &p)
	case receiver.KindPush:
		e, err := decodePush(e, &p)
		return e, err == nil, err
	case KindIssueComment:
		return decodeComment(e, &p)
	}
	return receiver.Event{}, false, fmt.Errorf("event %q is not handled", kind)
}

func decodePull(e receiver.Event, p *payload) (receiver.Event, bool, error) {
	if p.Action == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "action", Problem: "is missing"}
	}
	action, ok := pullAction(p.Action)
	e.Action = action
	if !ok {
		return e, false, nil
	}
	if e.Sender == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "sender.login", Problem: "is missing"}
	}
	pr := p.PullRequest
	if pr == nil {
		return receiver.Event{}, false, &receiver.FieldError{Field: "pull_request", Problem: "is missing"}
	}
	e.Number = p.Number
	if e.Number == 0 {
		e.Number = pr.Number
	}
	if e.Number <= 0 {
		return receiver.Event{}, false, &receiver.FieldError{Field: "number", Problem: "is missing or not positive"}
	}
	if pr.Number != 0 && pr.Number != e.Number {
		return receiver.Event{}, false, &receiver.FieldError{Field: "pull_request.number", Problem: fmt.Sprintf("is %d but number is %d", pr.Number, e.Number)}
	}
	if !commitid.Valid(pr.Head.SHA) {
		return receiver.Event{}, false, &receiver.FieldError{Field: "pull_request.head.sha", Problem: "is missing or not a commit id"}
	}
	e.SHA, e.Ref = pr.Head.SHA, pr.Base.Ref
	if action == receiver.ActionClosed && pr.Merged {
		e.Merged = true
		if pr.MergeCommitSHA != nil && *pr.MergeCommitSHA != "" {
			if !commitid.Valid(*pr.MergeCommitSHA) {
				return receiver.Event{}, false, &receiver.FieldError{Field: "pull_request.merge_commit_sha", Problem: "is not a commit id"}
			}
			e.MergeCommitSHA = *pr.MergeCommitSHA
		}
	}
	return e, true, nil
}

func decodePush(e receiver.Event, p *payload) (receiver.Event, error) {
	if !strings.HasPrefix(p.Ref, "refs/") {
		return receiver.Event{}, &receiver.FieldError{Field: "ref", Problem: "is missing or not a full ref name"}
	}
	if !commitid.Valid(p.After) {
		return receiver.Event{}, &receiver.FieldError{Field: "after", Problem: "is missing or not a commit id"}
	}
	if e.Sender == "" {
		return receiver.Event{}, &receiver.FieldError{Field: "sender.login", Problem: "is missing"}
	}
	e.Ref, e.SHA = p.Ref, p.After
	return e, nil
}

func decodeComment(e receiver.Event, p *payload) (receiver.Event, bool, error) {
	if p.Action == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.Action
	if p.Issue == nil {
		return receiver.Event{}, false, &receiver.FieldError{Field: "issue", Problem: "is missing"}
	}
	if !p.IsPull && p.Issue.PullRequest == nil {
		return e, false, nil // a comment on an issue
	}
	switch p.Action {
	case "created", "edited", "deleted":
	default:
		return e, false, nil
	}
	if e.Sender == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "sender.login", Problem: "is missing"}
	}
	if p.Issue.Number <= 0 {
		return receiver.Event{}, false, &receiver.FieldError{Field: "issue.number", Problem: "is missing or not positive"}
	}
	e.Number = p.Issue.Number
	return e, true, nil
}

// unmarshal decodes a JSON object, reporting a syntax or type error as a *receiver.FieldError.
func unmarshal(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &receiver.FieldError{Field: typeErr.Field, Problem: "has the wrong type (" + typeErr.Value + ")"}
		}
		return &receiver.FieldError{Field: "(body)", Problem: "is not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return &receiver.FieldError{Field: "(body)", Problem: "has data after the JSON object"}
	}
	return nil
}

// checkFullName checks an "owner/name" repository name.
func checkFullName(name string) error {
	owner, repo, ok := strings.Cut(name, "/")
	if name == "" {
		return &receiver.FieldError{Field: "repository.full_name", Problem: "is missing"}
	}
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") || strings.ContainsAny(name, " \t\r\n") {
		return &receiver.FieldError{Field: "repository.full_name", Problem: fmt.Sprintf("is %q, not owner/name", name)}
	}
	return nil
}
