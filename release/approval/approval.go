// Package approval parses and records step approvals given through the
// sluice.dev/approve annotation of a Rollout, and the record of approvals
// applied that sluice keeps in sluice.dev/approvals.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Approval approves the paused steps of one revision up to and including
// Step.
type Approval struct {
	// Action is what the record is of: empty for an approval, ActionAbort
	// or ActionRetry for the abort and retry requests sluice applied, which
	// are recorded beside the approvals.
	Action string `json:"action,omitempty"`
	// Revision is the canary revision approved; empty approves nothing until
	// the admission webhook pins it to the revision being released.
	Revision string `json:"revision,omitempty"`
	// Step is the last step approved, counted from 1.
	Step int32 `json:"step"`
	// By is who approved, as the API server authenticated them.
	By string `json:"by,omitempty"`
	// Via is how the approval was given: annotation, status, label, commit.
	Via string `json:"via,omitempty"`
	// At is when the approval was given.
	At *time.Time `json:"at,omitempty"`
	// Commit is the Git commit the approval was given in, when it was
	// (a trailer, or the annotation's value set in Git).
	Commit string `json:"commit,omitempty"`
	// PullRequest is the number of the pull request that brought Commit,
	// where known.
	PullRequest int32 `json:"pullRequest,omitempty"`
	// Approvers are the individual approvals a GitGate counted toward its
	// quorum (spec.approval.minApprovals), one per person: who, how, when,
	// from which commit and on which pull request. By and Via then join
	// theirs.
	Approvers []Approver `json:"approvers,omitempty"`
}

// Approver is one person's approval among those of a quorum.
type Approver struct {
	// By is who approved.
	By string `json:"by"`
	// Via is how: a label, a comment, a review, a trailer.
	Via string `json:"via,omitempty"`
	// At is when.
	At *time.Time `json:"at,omitempty"`
	// Commit is the Git commit the approval came from, when it did.
	Commit string `json:"commit,omitempty"`
	// PullRequest is the pull request it was given on, when it was.
	PullRequest int32 `json:"pullRequest,omitempty"`
}

// AllSteps is the Step of an approval of every step ("step=all"): a full
// promotion.
const AllSteps int32 = math.MaxInt32

// CommitRevision tells whether rev names a Git commit rather than a
// workload revision: 7 to 64 lower- or upper-case hexadecimal digits, the
// way an abbreviated or full commit SHA is written. A pod-template-hash
// may look like one only when it is all digits and letters a-f; callers
// compare with the revision being released first.
func CommitRevision(rev string) bool {
	if len(rev) < 7 || len(rev) > 64 {
		return false
	}
	for _, c := range rev {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// The actions of a record other than an approval.
const (
	// ActionAbort records an abort.
	ActionAbort = "abort"
	// ActionRetry records a retry.
	ActionRetry = "retry"
)

// Covers reports whether a approves step of revision.
func (a Approval) Covers(revision string, step int32) bool {
	return a.Action == "" && a.Revision != "" && a.Revision == revision && step >= 1 && step <= a.Step
}

// maxLen bounds the annotation value accepted, far above any real one.
const maxLen = 4096

// Parse reads an approval annotation value. It accepts a step number ("2"),
// "step=2" (or "step=all", every step: a full promotion) optionally
// followed by ",revision=<rev>", or the JSON form that sluice writes. The
// revision is the workload revision being released or, for a GitGate to
// resolve, a commit SHA (7 or more hex digits) of the commit being
// released. Errors name the part that is wrong.
func Parse(value string) (Approval, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return Approval{}, errors.New("empty approval: give the step to approve, e.g. \"2\"")
	}
	if len(value) > maxLen {
		return Approval{}, fmt.Errorf("approval is %d bytes long, more than %d", len(value), maxLen)
	}
	if strings.HasPrefix(value, "{") {
		var a Approval
		if err := json.Unmarshal([]byte(value), &a); err != nil {
			return Approval{}, fmt.Errorf("approval is not valid JSON: %w", err)
		}
		return a, validate(a)
	}
	if n, err := strconv.ParseInt(value, 10, 32); err == nil {
		a := Approval{Step: int32(n)}
		return a, validate(a)
	}
	var a Approval
	for _, part := range strings.Split(value, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Approval{}, fmt.Errorf("approval part %q is not key=value", part)
		}
		switch strings.TrimSpace(k) {
		case "step":
			if strings.TrimSpace(v) == "all" {
				a.Step = AllSteps
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return Approval{}, fmt.Errorf("approval step %q is not a number", v)
			}
			a.Step = int32(n)
		case "revision":
			a.Revision = strings.TrimSpace(v)
		default:
			return Approval{}, fmt.Errorf("approval key %q is unknown; use step and revision", k)
		}
	}
	return a, validate(a)
}

func validate(a Approval) error {
	if a.Step < 1 {
		return fmt.Errorf("approval step %d must be 1 or more", a.Step)
	}
	if !validRevision(a.Revision) {
		return fmt.Errorf("approval revision %q may only hold letters, digits, '.', '_' and '-' (a pod-template-hash, controller revision or commit SHA)", a.Revision)
	}
	return nil
}

// validRevision tells whether rev can name a revision: empty, or the
// characters of pod-template-hashes, controller-revision names and commit
// SHAs. Anything else (spaces, quotes, bytes that are not UTF-8) names no
// revision and would not survive the JSON record unchanged.
func validRevision(rev string) bool {
	for _, c := range rev {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return len(rev) <= 253
}

// Encode writes a as the JSON annotation value.
func Encode(a Approval) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// maxRecords bounds the record kept on a Rollout.
const maxRecords = 20

// Append adds a to the record of applied approvals in raw (the value of
// sluice.dev/approvals), keeping the newest maxRecords. since is when the
// release entered the state the approval moves it out of (the canary
// status' lastUpdateTime). An approval of the same step of the same
// revision as the newest record, when that record was made at or after
// since, is that record again (a manager killed after recording it, before
// the status moved the step on, applies it again when it is back): raw is
// returned unchanged. A record older than since belongs to an earlier
// release of the same revision, and the approval is recorded anew.
func Append(raw string, a Approval, since time.Time) (string, error) {
	records, err := Records(raw)
	if err != nil {
		records = nil // a damaged record is replaced, not kept failing
	}
	if n := len(records); n > 0 && records[n-1].Action == a.Action && records[n-1].Revision == a.Revision && records[n-1].Step == a.Step &&
		records[n-1].At != nil && !records[n-1].At.Before(since.Truncate(time.Second)) {
		return raw, nil
	}
	records = append(records, a)
	if len(records) > maxRecords {
		records = records[len(records)-maxRecords:]
	}
	b, err := json.Marshal(records)
	return string(b), err
}

// Records parses the record of applied approvals.
func Records(raw string) ([]Approval, error) {
	if raw == "" {
		return nil, nil
	}
	var records []Approval
	if err := json.Unmarshal([]byte(raw), &records); err != nil {
		return nil, fmt.Errorf("approval record: %w", err)
	}
	return records, nil
}
