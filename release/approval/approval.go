// Package approval parses and records step approvals given through the
// sluice.dev/approve annotation of a Rollout, and the record of approvals
// applied that sluice keeps in sluice.dev/approvals.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Approval approves the paused steps of one revision up to and including
// Step.
type Approval struct {
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
}

// Covers reports whether a approves step of revision.
func (a Approval) Covers(revision string, step int32) bool {
	return a.Revision != "" && a.Revision == revision && step >= 1 && step <= a.Step
}

// maxLen bounds the annotation value accepted, far above any real one.
const maxLen = 4096

// Parse reads an approval annotation value. It accepts a step number ("2"),
// "step=2" optionally followed by ",revision=<rev>", or the JSON form that
// sluice writes. Errors name the part that is wrong.
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
	return nil
}

// Encode writes a as the JSON annotation value.
func Encode(a Approval) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// maxRecords bounds the record kept on a Rollout.
const maxRecords = 20

// Append adds a to the record of applied approvals in raw (the value of
// sluice.dev/approvals), keeping the newest maxRecords.
func Append(raw string, a Approval) (string, error) {
	records, err := Records(raw)
	if err != nil {
		records = nil // a damaged record is replaced, not kept failing
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
