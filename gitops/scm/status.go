package scm

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Validate checks a status before it is posted and returns it normalised: the description cut
// to MaxDescriptionLength characters (an ellipsis marks the cut).
func (s CommitStatus) Validate() (CommitStatus, error) {
	switch s.State {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		return s, fmt.Errorf("invalid commit status state %q", s.State)
	}
	if strings.TrimSpace(s.Context) == "" {
		return s, errors.New("commit status context is empty")
	}
	s.Description = TruncateDescription(s.Description)
	return s, nil
}

// Same tells whether two statuses show the same thing: the same context (case-insensitively),
// state, description and target URL.
func (s CommitStatus) Same(o CommitStatus) bool {
	return strings.EqualFold(s.Context, o.Context) && s.State == o.State &&
		s.Description == o.Description && s.TargetURL == o.TargetURL
}

// TruncateDescription cuts d to at most MaxDescriptionLength characters (runes), ending a cut
// text with "…".
func TruncateDescription(d string) string {
	if utf8.RuneCountInString(d) <= MaxDescriptionLength {
		return d
	}
	runes := []rune(d)
	return string(runes[:MaxDescriptionLength-1]) + "…"
}
