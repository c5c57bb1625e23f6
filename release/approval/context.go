package approval

import (
	"encoding/json"
	"fmt"
	"time"
)

// Context is what the admission webhook records when the approve
// annotation changes.
type Context struct {
	// By is the user who wrote the approval, as authenticated.
	By string `json:"by"`
	// At is when the approval was written.
	At time.Time `json:"at"`
	// Revision is the canary revision being released at that moment.
	Revision string `json:"revision,omitempty"`
}

// EncodeContext writes c as the annotation value.
func EncodeContext(c Context) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// ParseContext reads the context annotation value.
func ParseContext(raw string) (Context, error) {
	var c Context
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Context{}, fmt.Errorf("approval context: %w", err)
	}
	return c, nil
}

// Resolve combines the approve annotation with its context: the context
// supplies who and when, and pins the revision when the approval names none.
// Without a context an approval that names no revision approves nothing.
func Resolve(value, context string) (Approval, error) {
	a, err := Parse(value)
	if err != nil {
		return Approval{}, err
	}
	if context == "" {
		return a, nil
	}
	c, err := ParseContext(context)
	if err != nil {
		return a, nil //nolint:nilerr // a damaged context only loses who and when
	}
	if a.Revision == "" {
		a.Revision = c.Revision
	}
	a.By = c.By
	at := c.At
	a.At = &at
	return a, nil
}
