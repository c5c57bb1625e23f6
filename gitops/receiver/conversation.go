package receiver

import (
	"fmt"

	"github.com/google/go-github/v56/github"
)

// The events of what people write on a pull request: comment commands
// ("/sluice approve") and reviews. Like every event they are hints: the gate
// reads the comments and reviews back from the API.
const (
	// KindIssueComment is a comment created or edited in an issue's or pull
	// request's conversation; only pull requests' are handed on.
	KindIssueComment Kind = "issue_comment"
	// KindPullRequestReview is a review submitted or dismissed.
	KindPullRequestReview Kind = "pull_request_review"
)

// The actions of the conversation events that are handed to the Trigger.
const (
	// ActionCreated is a comment written.
	ActionCreated = "created"
	// ActionEdited is a comment edited: it counts from its edit.
	ActionEdited = "edited"
	// ActionSubmitted is a review submitted.
	ActionSubmitted = "submitted"
	// ActionDismissed is a review dismissed: it approves nothing any more.
	ActionDismissed = "dismissed"
)

// conversationKind tells whether k is an event of a pull request's
// conversation.
func conversationKind(k Kind) bool {
	return k == KindIssueComment || k == KindPullRequestReview
}

// ignoredConversation says why a conversation event is not handed on (""
// when it is): an action sluice does not use, or a comment on an issue.
func ignoredConversation(e Event) string {
	switch {
	case e.Kind == KindIssueComment && e.Action != ActionCreated && e.Action != ActionEdited:
		return fmt.Sprintf("issue_comment action %q is not used by sluice, ignored", e.Action)
	case e.Kind == KindIssueComment && e.Number == 0:
		return "a comment on an issue, not a pull request, ignored"
	case e.Kind == KindPullRequestReview && e.Action != ActionSubmitted && e.Action != ActionDismissed:
		return fmt.Sprintf("pull_request_review action %q is not used by sluice, ignored", e.Action)
	}
	return ""
}

// decodeComment reads an issue_comment: the pull request's number (0 for
// an issue) and, for a pull request, who commented.
func decodeComment(e Event, p *github.IssueCommentEvent) (Event, error) {
	if p.GetAction() == "" {
		return Event{}, &FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.GetAction()
	if p.Issue == nil {
		return Event{}, &FieldError{Field: "issue", Problem: "is missing"}
	}
	if !p.Issue.IsPullRequest() {
		return e, nil
	}
	if e.Number = p.Issue.GetNumber(); e.Number <= 0 {
		return Event{}, &FieldError{Field: "issue.number", Problem: "is missing or not positive"}
	}
	if e.Sender == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	return e, nil
}

// decodeReview reads a pull_request_review: the pull request's number, its
// head and base, and who acted.
func decodeReview(e Event, p *github.PullRequestReviewEvent) (Event, error) {
	if p.GetAction() == "" {
		return Event{}, &FieldError{Field: "action", Problem: "is missing"}
	}
	e.Action = p.GetAction()
	pr := p.PullRequest
	if pr == nil {
		return Event{}, &FieldError{Field: "pull_request", Problem: "is missing"}
	}
	if e.Number = pr.GetNumber(); e.Number <= 0 {
		return Event{}, &FieldError{Field: "pull_request.number", Problem: "is missing or not positive"}
	}
	if e.Sender == "" {
		return Event{}, &FieldError{Field: "sender.login", Problem: "is missing"}
	}
	e.SHA, e.Ref = pr.GetHead().GetSHA(), pr.GetBase().GetRef()
	return e, nil
}
