package scm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// CheckRunWriter keeps one check run per name on a commit, with buttons ("requested actions")
// a person can press. GitHub lets only a GitHub App write check runs: the GitHub client built
// from an App's credentials implements it, a token's does not, and other hosts have none.
type CheckRunWriter interface {
	// SetCheckRun makes run the state of the check run named run.Name on the commit sha: it
	// creates the check run the first time, updates it in place after, and sends nothing when
	// nothing changed. A completed check run that is to be in progress again (a release
	// retried) is followed by a new one, as a re-run is. posted tells whether a request changed
	// anything.
	SetCheckRun(ctx context.Context, sha string, run CheckRun) (posted bool, err error)
}

// CheckRunStatus is where a check run is.
type CheckRunStatus string

// The statuses of a check run sluice writes.
const (
	// CheckInProgress is a check run still going (a release between steps, or paused).
	CheckInProgress CheckRunStatus = "in_progress"
	// CheckCompleted is a finished check run; its Conclusion says how.
	CheckCompleted CheckRunStatus = "completed"
)

// CheckConclusion is how a completed check run ended.
type CheckConclusion string

// The conclusions sluice gives a completed check run.
const (
	// ConclusionSuccess: the release completed.
	ConclusionSuccess CheckConclusion = "success"
	// ConclusionFailure: the release was rolled back, rejected or aborted.
	ConclusionFailure CheckConclusion = "failure"
	// ConclusionNeutral: the release ended without a verdict.
	ConclusionNeutral CheckConclusion = "neutral"
)

// GitHub's limits on a check run's actions and output.
const (
	// MaxCheckActions is how many buttons a check run may have.
	MaxCheckActions = 3
	// MaxActionLabel is the longest button label, in characters.
	MaxActionLabel = 20
	// MaxActionDescription is the longest description of a button, in characters.
	MaxActionDescription = 40
	// MaxActionIdentifier is the longest identifier of a button, in characters.
	MaxActionIdentifier = 20
	// MaxCheckSummary is the longest summary (and text) of a check run's output, in
	// characters; a longer summary is cut.
	MaxCheckSummary = 65535
)

// CheckRun is a check run as sluice wants it.
type CheckRun struct {
	// Name names the check run on the commit (sluice uses the commit status's context).
	Name string
	// ExternalID is sluice's reference for it: the Rollout, "namespace/name". A button
	// press's delivery carries it back.
	ExternalID string
	// DetailsURL links to a page about the release; may be empty.
	DetailsURL string
	// Status is in_progress or completed.
	Status CheckRunStatus
	// Conclusion says how a completed check run ended; empty while in progress.
	Conclusion CheckConclusion
	// Title is the output's title: one line.
	Title string
	// Summary is the output's summary, Markdown.
	Summary string
	// Actions are the buttons, at most MaxCheckActions; none when the check run offers none.
	Actions []CheckAction
}

// CheckAction is a button on a check run.
type CheckAction struct {
	// Label is the button's text, at most MaxActionLabel characters.
	Label string
	// Description says what it does, at most MaxActionDescription characters.
	Description string
	// Identifier is what the button's press delivers back (requested_action.identifier), at
	// most MaxActionIdentifier characters.
	Identifier string
}

// Validate checks a check run against GitHub's rules and returns it normalised: the summary cut
// to MaxCheckSummary characters (an ellipsis marks the cut).
func (r CheckRun) Validate() (CheckRun, error) {
	if strings.TrimSpace(r.Name) == "" {
		return r, fmt.Errorf("check run name is empty")
	}
	switch {
	case r.Status == CheckInProgress && r.Conclusion == "":
	case r.Status == CheckCompleted && (r.Conclusion == ConclusionSuccess || r.Conclusion == ConclusionFailure || r.Conclusion == ConclusionNeutral):
	default:
		return r, fmt.Errorf("check run %q: status %q with conclusion %q", r.Name, r.Status, r.Conclusion)
	}
	if strings.TrimSpace(r.Title) == "" {
		return r, fmt.Errorf("check run %q has no title", r.Name)
	}
	if len(r.Actions) > MaxCheckActions {
		return r, fmt.Errorf("check run %q has %d actions, at most %d are allowed", r.Name, len(r.Actions), MaxCheckActions)
	}
	for _, a := range r.Actions {
		if err := a.validate(); err != nil {
			return r, fmt.Errorf("check run %q: %w", r.Name, err)
		}
	}
	if utf8.RuneCountInString(r.Summary) > MaxCheckSummary {
		r.Summary = string([]rune(r.Summary)[:MaxCheckSummary-1]) + "…"
	}
	r.Actions = slices.Clone(r.Actions)
	return r, nil
}

func (a CheckAction) validate() error {
	for _, f := range []struct {
		name, value string
		limit       int
	}{
		{"label", a.Label, MaxActionLabel},
		{"description", a.Description, MaxActionDescription},
		{"identifier", a.Identifier, MaxActionIdentifier},
	} {
		if n := utf8.RuneCountInString(f.value); n == 0 || n > f.limit {
			return fmt.Errorf("action %s %q must have 1 to %d characters", f.name, f.value, f.limit)
		}
	}
	return nil
}

// Same tells whether two check runs show the same thing.
func (r CheckRun) Same(o CheckRun) bool {
	return r.Name == o.Name && r.ExternalID == o.ExternalID && r.DetailsURL == o.DetailsURL && r.Status == o.Status &&
		r.Conclusion == o.Conclusion && r.Title == o.Title && r.Summary == o.Summary && slices.Equal(r.Actions, o.Actions)
}
