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

// KindIssueComment is a comment created or edited on a merge request: GitLab's Note Hook. It
// has the value the Gitea receiver gives comments, so that a Trigger handles both alike.
const KindIssueComment receiver.Kind = "issue_comment"

// The X-Gitlab-Event names of the handled events.
const (
	eventMergeRequest = "Merge Request Hook"
	eventPush         = "Push Hook"
	eventTagPush      = "Tag Push Hook"
	eventNote         = "Note Hook"
)

// kindOf maps an X-Gitlab-Event name to the receiver's kind; ok is false for the events sluice
// does not use.
func kindOf(event string) (receiver.Kind, bool) {
	switch event {
	case eventMergeRequest:
		return receiver.KindPullRequest, true
	case eventPush, eventTagPush:
		return receiver.KindPush, true
	case eventNote:
		return KindIssueComment, true
	}
	return "", false
}

// The payload shapes, reduced to what sluice reads.
type (
	payloadUser struct {
		Username string `json:"username"`
	}
	payloadProject struct {
		PathWithNamespace string `json:"path_with_namespace"`
	}
	payloadLabel struct {
		Title string `json:"title"`
	}
	payloadCommit struct {
		ID string `json:"id"`
	}
	payloadMergeRequest struct {
		IID            int           `json:"iid"`
		Action         string        `json:"action"`
		State          string        `json:"state"`
		TargetBranch   string        `json:"target_branch"`
		MergeCommitSHA *string       `json:"merge_commit_sha"`
		OldRev         *string       `json:"oldrev"`
		LastCommit     payloadCommit `json:"last_commit"`
	}
	payloadNote struct {
		NoteableType string `json:"noteable_type"` //nolint:misspell // GitLab's field name
		Action       string `json:"action"`
	}
	payloadChanges struct {
		Labels *struct {
			Previous []payloadLabel `json:"previous"`
			Current  []payloadLabel `json:"current"`
		} `json:"labels"`
	}
	// payload is the union of the handled events' fields. object_attributes is read as a merge
	// request or a note depending on the event.
	payload struct {
		User             *payloadUser         `json:"user"`
		UserUsername     string               `json:"user_username"`
		Project          *payloadProject      `json:"project"`
		ObjectAttributes json.RawMessage      `json:"object_attributes"`
		MergeRequest     *payloadMergeRequest `json:"merge_request"`
		Changes          *payloadChanges      `json:"changes"`
		Ref              string               `json:"ref"`
		After            string               `json:"after"`
	}
)

// repositoryOf reads only the project's path, to look up the secrets before the token is
// verified. Its errors are *receiver.FieldError.
func repositoryOf(body []byte) (string, error) {
	var p struct {
		Project *payloadProject `json:"project"`
	}
	if err := unmarshal(body, &p); err != nil {
		return "", err
	}
	if p.Project == nil {
		return "", &receiver.FieldError{Field: "project", Problem: "is missing"}
	}
	if err := checkPath(p.Project.PathWithNamespace); err != nil {
		return "", err
	}
	return p.Project.PathWithNamespace, nil
}

// decode reads a delivery of a handled kind. handled is false for an action (or a comment on
// something else than a merge request) sluice does not use; the Event then carries only the
// action. Its errors are *receiver.FieldError.
func decode(kind receiver.Kind, body []byte) (e receiver.Event, handled bool, err error) {
	var p payload
	if err := unmarshal(body, &p); err != nil {
		return receiver.Event{}, false, err
	}
	if p.Project == nil {
		return receiver.Event{}, false, &receiver.FieldError{Field: "project", Problem: "is missing"}
	}
	if err := checkPath(p.Project.PathWithNamespace); err != nil {
		return receiver.Event{}, false, err
	}
	e = receiver.Event{Kind: kind, Repository: p.Project.PathWithNamespace}
	if p.User != nil {
		e.Sender = p.User.Username
	}
	switch kind {
	case receiver.KindPullRequest:
		return decodeMergeRequest(e, &p)
	case receiver.KindPush:
		e, err := decodePush(e, &p)
		return e, err == nil, err
	case KindIssueComment:
		return decodeNote(e, &p)
	}
	return receiver.Event{}, false, fmt.Errorf("event %q is not handled", kind)
}

func decodeMergeRequest(e receiver.Event, p *payload) (receiver.Event, bool, error) {
	var mr payloadMergeRequest
	if err := attributes(p, &mr); err != nil {
		return receiver.Event{}, false, err
	}
	if mr.Action == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "object_attributes.action", Problem: "is missing"}
	}
	action, label, ok := mergeRequestAction(&mr, p.Changes)
	if review, ok := approvalAction(mr.Action); ok {
		// An approval given or taken back is a review of the merge request: the gate reads
		// the approvals back from the API.
		e.Kind, action, label = receiver.KindPullRequestReview, review, ""
	}
	e.Action = action
	if !ok && e.Kind != receiver.KindPullRequestReview {
		return e, false, nil
	}
	if e.Sender == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "user.username", Problem: "is missing"}
	}
	if mr.IID <= 0 {
		return receiver.Event{}, false, &receiver.FieldError{Field: "object_attributes.iid", Problem: "is missing or not positive"}
	}
	if !commitid.Valid(mr.LastCommit.ID) {
		return receiver.Event{}, false, &receiver.FieldError{Field: "object_attributes.last_commit.id", Problem: "is missing or not a commit id"}
	}
	e.Number, e.SHA, e.Ref, e.Label = mr.IID, mr.LastCommit.ID, mr.TargetBranch, label
	if mr.Action == "merge" {
		e.Merged = true
		if sha := deref(mr.MergeCommitSHA); sha != "" {
			if !commitid.Valid(sha) {
				return receiver.Event{}, false, &receiver.FieldError{Field: "object_attributes.merge_commit_sha", Problem: "is not a commit id"}
			}
			e.MergeCommitSHA = sha
		}
	}
	return e, true, nil
}

// mergeRequestAction maps a Merge Request Hook's action onto the receiver's: open, reopen and
// close are the same; merge is closed (merged); an update with oldrev (new commits) is
// synchronize, and one that changed the labels is labeled or unlabeled (with the label, when
// exactly one was added or removed; otherwise labeled without one). Other updates are not
// used; the approval actions are reviews (approvalAction).
func mergeRequestAction(mr *payloadMergeRequest, changes *payloadChanges) (action, label string, ok bool) {
	switch mr.Action {
	case "open":
		return receiver.ActionOpened, "", true
	case "reopen":
		return receiver.ActionReopened, "", true
	case "close", "merge":
		return receiver.ActionClosed, "", true
	case "update":
		if deref(mr.OldRev) != "" {
			return receiver.ActionSynchronize, "", true
		}
		if changes == nil || changes.Labels == nil {
			return mr.Action, "", false
		}
		added, removed := labelDiff(changes.Labels.Previous, changes.Labels.Current)
		switch {
		case len(added) == 0 && len(removed) == 0:
			return mr.Action, "", false
		case len(added) == 1 && len(removed) == 0:
			return receiver.ActionLabeled, added[0], true
		case len(added) == 0 && len(removed) == 1:
			return receiver.ActionUnlabeled, removed[0], true
		}
		return receiver.ActionLabeled, "", true
	}
	return mr.Action, "", false
}

// approvalAction maps the Merge Request Hook's approval actions (one person's approval or its
// withdrawal, and the merge request becoming approved or unapproved) onto a review's.
func approvalAction(action string) (string, bool) {
	switch action {
	case "approval", "approved":
		return receiver.ActionSubmitted, true
	case "unapproval", "unapproved":
		return receiver.ActionDismissed, true
	}
	return "", false
}

// labelDiff lists the labels in current but not previous, and in previous but not current.
func labelDiff(previous, current []payloadLabel) (added, removed []string) {
	in := func(list []payloadLabel, title string) bool {
		for _, l := range list {
			if l.Title == title {
				return true
			}
		}
		return false
	}
	for _, l := range current {
		if l.Title != "" && !in(previous, l.Title) {
			added = append(added, l.Title)
		}
	}
	for _, l := range previous {
		if l.Title != "" && !in(current, l.Title) {
			removed = append(removed, l.Title)
		}
	}
	return added, removed
}

func decodePush(e receiver.Event, p *payload) (receiver.Event, error) {
	if !strings.HasPrefix(p.Ref, "refs/") {
		return receiver.Event{}, &receiver.FieldError{Field: "ref", Problem: "is missing or not a full ref name"}
	}
	if !commitid.Valid(p.After) {
		return receiver.Event{}, &receiver.FieldError{Field: "after", Problem: "is missing or not a commit id"}
	}
	if p.UserUsername == "" {
		return receiver.Event{}, &receiver.FieldError{Field: "user_username", Problem: "is missing"}
	}
	e.Sender, e.Ref, e.SHA = p.UserUsername, p.Ref, p.After
	return e, nil
}

func decodeNote(e receiver.Event, p *payload) (receiver.Event, bool, error) {
	var note payloadNote
	if err := attributes(p, &note); err != nil {
		return receiver.Event{}, false, err
	}
	switch note.Action {
	case "", "create":
		e.Action = "created"
	case "update":
		e.Action = "edited"
	default:
		e.Action = note.Action
		return e, false, nil
	}
	if note.NoteableType != "MergeRequest" {
		return e, false, nil // a comment on an issue, a commit or a snippet
	}
	if e.Sender == "" {
		return receiver.Event{}, false, &receiver.FieldError{Field: "user.username", Problem: "is missing"}
	}
	if p.MergeRequest == nil || p.MergeRequest.IID <= 0 {
		return receiver.Event{}, false, &receiver.FieldError{Field: "merge_request.iid", Problem: "is missing or not positive"}
	}
	e.Number = p.MergeRequest.IID
	return e, true, nil
}

// attributes decodes object_attributes into v.
func attributes(p *payload, v any) error {
	if len(p.ObjectAttributes) == 0 || string(p.ObjectAttributes) == "null" {
		return &receiver.FieldError{Field: "object_attributes", Problem: "is missing"}
	}
	if err := json.Unmarshal(p.ObjectAttributes, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &receiver.FieldError{Field: "object_attributes." + typeErr.Field, Problem: "has the wrong type (" + typeErr.Value + ")"}
		}
		return &receiver.FieldError{Field: "object_attributes", Problem: "is not a JSON object"}
	}
	return nil
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

// checkPath checks a project's path with its namespace: two or more non-empty segments.
func checkPath(path string) error {
	if path == "" {
		return &receiver.FieldError{Field: "project.path_with_namespace", Problem: "is missing"}
	}
	parts := strings.Split(path, "/")
	ok := len(parts) >= 2 && !strings.ContainsAny(path, " \t\r\n")
	for _, s := range parts {
		ok = ok && s != "" && s != "." && s != ".."
	}
	if !ok {
		return &receiver.FieldError{Field: "project.path_with_namespace", Problem: fmt.Sprintf("is %q, not namespace/name", path)}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
