package scm

import (
	"errors"
	"fmt"
	"time"
)

// RateLimitError is returned when the host refuses requests for a while (a primary limit with
// no requests left, or a secondary limit), and when the client itself refuses to send a request
// before that time has passed. Nothing is sent until RetryAt.
type RateLimitError struct {
	// RetryAt is the earliest time a request may be sent again.
	RetryAt time.Time
	// Secondary tells a secondary (burst) limit from the primary hourly budget.
	Secondary bool
	// Message is the host's explanation, if it gave one.
	Message string
}

// Error implements error.
func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	msg := fmt.Sprintf("%s rate limit: retry at %s", kind, e.RetryAt.UTC().Format(time.RFC3339))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// NotFoundError is returned when the repository, commit, pull request, user or branch does not
// exist, or the credentials may not see it (GitHub answers 404 for both).
type NotFoundError struct {
	// What names what was looked for.
	What string
	// Message is the host's explanation, if it gave one.
	Message string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("not found: %s", e.What)
	}
	return fmt.Sprintf("not found: %s: %s", e.What, e.Message)
}

// UnauthorizedError is returned when the credentials are missing, invalid or expired (401), or
// lack the permission the request needs (403 that is not a rate limit).
type UnauthorizedError struct {
	// StatusCode is the HTTP status the host answered with (401 or 403).
	StatusCode int
	// Message is the host's explanation, if it gave one.
	Message string
}

// Error implements error.
func (e *UnauthorizedError) Error() string {
	return fmt.Sprintf("unauthorized (%d): %s", e.StatusCode, e.Message)
}

// ConflictError is returned by ProposeRevert when the commit cannot be reverted on the base
// branch without a content merge (later commits changed the same paths).
type ConflictError struct {
	// Paths are the conflicting paths; empty when the host does not name them (GitLab).
	Paths []string
}

// Error implements error.
func (e *ConflictError) Error() string {
	if len(e.Paths) == 0 {
		return "revert conflicts with later changes on the base"
	}
	return fmt.Sprintf("revert conflicts on %d path(s): %v", len(e.Paths), e.Paths)
}

// IsNotFound tells whether err is or wraps a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// IsUnauthorized tells whether err is or wraps an UnauthorizedError.
func IsUnauthorized(err error) bool {
	var ue *UnauthorizedError
	return errors.As(err, &ue)
}

// RetryAt returns when to try again after err: the rate limit's time for a RateLimitError
// (ok true), the zero time and false otherwise.
func RetryAt(err error) (time.Time, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAt, true
	}
	return time.Time{}, false
}
