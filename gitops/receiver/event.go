package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/commitid"
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
	// KindCheckRun is a check run created, completed, re-requested, or one of its buttons
	// pressed (requested_action, the only action sluice hands on). GitHub sends it to a GitHub
	// App's webhook.
	KindCheckRun Kind = "check_run"
)

// ActionRequestedAction is a button of a check run pressed (check_run deliveries).
const ActionRequestedAction = "requested_action"

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
	// CheckRun is the id of the check run whose button was pressed (check_run only); its
	// commit is SHA.
	CheckRun int64
	// CheckRunName is the check run's name (check_run only).
	CheckRunName string
	// ExternalID is the check run's external_id (check_run only): the Rollout,
	// "namespace/name", for sluice's check runs.
	ExternalID string
	// Identifier is the identifier of the button pressed (requested_action.identifier).
	Identifier string

	// signature and payload are the delivery's X-Hub-Signature-256 and the exact bytes it
	// covers, kept for check_run deliveries only (see SignedWith).
	signature string
	payload   string
}

// SignedWith tells whether the delivery of a check_run event was signed with secret. The
// receiver accepts a delivery signed with any secret configured for its repository; a button
// press acts on one GitGate, which asks whether the delivery was signed with its own secret,
// so that a tenant who knows only their gate's secret cannot press another gate's buttons.
// Events of other kinds keep no signature, and answer false.
func (e Event) SignedWith(secret []byte) bool {
	return len(secret) > 0 && e.signature != "" && github.ValidateSignature(e.signature, []byte(e.payload), secret) == nil
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

// handledKind tells whether the receiver decodes deliveries of an event.
func handledKind(k Kind) bool {
	return k == KindPullRequest || k == KindPush || k == KindPing || k == KindCheckRun || conversationKind(k)
}

// handledAction tells whether a pull_request action is handed to the Trigger.
func handledAction(action string) bool {
	switch action {
	case ActionOpened, ActionReopened, ActionSynchronize, ActionClosed, ActionLabeled, ActionUnlabeled:
		return true
	}
	return false
}

// decode reads an event of a handled kind from its JSON payload with go-github's
// ParseWebHook, and checks the fields sluice relies on. Its errors are *FieldError. A
// pull_request action that is not handled decodes without error; the caller ignores it.
func decode(kind Kind, body []byte) (Event, error) {
	parsed, err := github.ParseWebHook(string(kind), body)
	if err != nil {
		return Event{}, jsonError(body, err)
	}
	var (
		repo   *string // nil when the payload names no repository
		sender *github.User
	)
	switch ev := parsed.(type) {
	case *github.PullRequestEvent:
		repo, sender = fullName(ev.Repo), ev.Sender
	case *github.PushEvent:
		if ev.Repo != nil {
			repo = github.String(ev.Repo.GetFullName())
		}
		sender = ev.Sender
	case *github.PingEvent:
		repo, sender = fullName(ev.Repo), ev.Sender
	case *github.IssueCommentEvent:
		repo, sender = fullName(ev.Repo), ev.Sender
	case *github.PullRequestReviewEvent:
		repo, sender = fullName(ev.Repo), ev.Sender
	case *github.CheckRunEvent:
		repo, sender = fullName(ev.Repo), ev.Sender
	case nil: // the payload was JSON null
	default:
		return Event{}, fmt.Errorf("event %q is not handled", kind)
	}
	if repo == nil {
		return Event{}, &FieldError{Field: "repository", Problem: "is missing"}
	}
	if err := checkFullName(*repo); err != nil {
		return Event{}, err
	}
	e := Event{Kind: kind, Repository: *repo, Sender: sender.GetLogin()}
	switch ev := parsed.(type) {
	case *github.PullRequestEvent:
		return decodePull(e, ev)
	case *github.PushEvent:
		return decodePush(e, ev)
	case *github.PingEvent:
		e.HookID = ev.GetHookID()
	case *github.IssueCommentEvent:
		return decodeComment(e, ev)
	case *github.PullRequestReviewEvent:
		return decodeReview(e, ev)
	case *github.CheckRunEvent:
		return decodeCheckRun(e, ev)
	}
	return e, nil
}

// decodeCheckRun reads a check_run delivery; only requested_action is read further (the
// caller ignores the other actions).
func decodeCheckRun(e Event, p *github.CheckRunEvent) (Event, error) {
	if p.GetAction() == "" {
		return Event{}, &FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.GetAction()
	if e.Action != ActionRequestedAction {
		return e, nil
	}
	if e.Sender == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	run := p.GetCheckRun()
	if run == nil {
		return Event{}, &FieldError{Field: "check_run", Problem: "is missing"}
	}
	if run.GetID() <= 0 {
		return Event{}, &FieldError{Field: "check_run.id", Problem: "is missing or not positive"}
	}
	if !commitid.Valid(run.GetHeadSHA()) {
		return Event{}, &FieldError{Field: "check_run.head_sha", Problem: "is missing or not a commit id"}
	}
	if p.GetRequestedAction() == nil || p.GetRequestedAction().Identifier == "" {
		return Event{}, &FieldError{Field: "requested_action.identifier", Problem: "is missing"}
	}
	e.CheckRun, e.CheckRunName, e.ExternalID, e.SHA = run.GetID(), run.GetName(), run.GetExternalID(), run.GetHeadSHA()
	e.Identifier = p.GetRequestedAction().Identifier
	return e, nil
}

// fullName is the full_name of a repository ("" when it has none), nil when there is no
// repository.
func fullName(r *github.Repository) *string {
	if r == nil {
		return nil
	}
	return github.String(r.GetFullName())
}

func decodePull(e Event, p *github.PullRequestEvent) (Event, error) {
	if p.GetAction() == "" {
		return Event{}, &FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.GetAction()
	if !handledAction(e.Action) {
		return e, nil
	}
	if e.Sender == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	pr := p.PullRequest
	if pr == nil {
		return Event{}, &FieldError{Field: "pull_request", Problem: "is missing"}
	}
	e.Number = p.GetNumber()
	if e.Number == 0 {
		e.Number = pr.GetNumber()
	}
	if e.Number <= 0 {
		return Event{}, &FieldError{Field: "number", Problem: "is missing or not positive"}
	}
	if pr.GetNumber() != 0 && pr.GetNumber() != e.Number {
		return Event{}, &FieldError{Field: "pull_request.number", Problem: fmt.Sprintf("is %d but number is %d", pr.GetNumber(), e.Number)}
	}
	if !commitid.Valid(pr.GetHead().GetSHA()) {
		return Event{}, &FieldError{Field: "pull_request.head.sha", Problem: "is missing or not a commit id"}
	}
	e.SHA, e.Ref = pr.GetHead().GetSHA(), pr.GetBase().GetRef()
	if e.Action == ActionLabeled || e.Action == ActionUnlabeled {
		if p.GetLabel().GetName() == "" {
			return Event{}, &FieldError{Field: "label.name", Problem: "is missing"}
		}
		e.Label = p.GetLabel().GetName()
	}
	if e.Action == ActionClosed && pr.GetMerged() {
		e.Merged = true
		if merge := pr.GetMergeCommitSHA(); merge != "" {
			if !commitid.Valid(merge) {
				return Event{}, &FieldError{Field: "pull_request.merge_commit_sha", Problem: "is not a commit id"}
			}
			e.MergeCommitSHA = merge
		}
	}
	return e, nil
}

func decodePush(e Event, p *github.PushEvent) (Event, error) {
	if !strings.HasPrefix(p.GetRef(), "refs/") {
		return Event{}, &FieldError{Field: "ref", Problem: "is missing or not a full ref name"}
	}
	if !commitid.Valid(p.GetAfter()) {
		return Event{}, &FieldError{Field: "after", Problem: "is missing or not a commit id"}
	}
	if e.Sender == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	e.Ref, e.SHA = p.GetRef(), p.GetAfter()
	return e, nil
}

// jsonError names what ParseWebHook could not decode: the field of a type error, or the
// body. (ParseWebHook uses json.Unmarshal, which also refuses data after the object; that is
// told apart here so the message says so.)
func jsonError(body []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return &FieldError{Field: typeErr.Field, Problem: "has the wrong type (" + typeErr.Value + ")"}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		dec := json.NewDecoder(bytes.NewReader(body))
		var first json.RawMessage
		if dec.Decode(&first) == nil {
			return &FieldError{Field: "(body)", Problem: "has data after the JSON object"}
		}
	}
	if typeErr != nil || syntaxErr != nil {
		return &FieldError{Field: "(body)", Problem: "is not a JSON object: " + err.Error()}
	}
	return &FieldError{Field: "(body)", Problem: "cannot be decoded: " + err.Error()}
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
