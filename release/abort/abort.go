// Package abort reads the abort and retry requests of a Rollout: the
// sluice.dev/abort and sluice.dev/retry annotations, with the context the
// admission webhook records beside each (who wrote it, when, and the
// revision being released then). An abort holds a release on its stable
// revision without changing the pod template; a retry releases an aborted
// revision again from step 1.
package abort

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/release/approval"
)

// Request is one abort or retry request.
type Request struct {
	// Revision is the canary revision the request is for; empty until the
	// admission webhook pins it to the revision being released.
	Revision string `json:"revision,omitempty"`
	// By is who asked, as the API server authenticated them (or the person
	// a trusted delegate names).
	By string `json:"by,omitempty"`
	// Via is how the request reached sluice: annotation, kubectl-sluice,
	// github-label, git-revert, git-trailer.
	Via string `json:"via,omitempty"`
	// At is when it was asked.
	At *time.Time `json:"at,omitempty"`
	// Reason says why, in the words of whoever asked.
	Reason string `json:"reason,omitempty"`
	// Commit is the Git commit the request came from, if any.
	Commit string `json:"commit,omitempty"`
	// PullRequest is the pull request the request came from, if any.
	PullRequest int32 `json:"pullRequest,omitempty"`
}

// maxLen bounds the annotation value accepted, far above any real one.
const maxLen = 4096

// ErrNone is returned by Parse for a value that asks for nothing
// ("false"): the annotation may stay in Git, switched off.
var ErrNone = errors.New("the value asks for nothing")

// Parse reads an annotation value: the JSON form sluice and its tools
// write, "true" (the revision being released when it was written), or a
// canary revision. "false" returns ErrNone. Errors name what is wrong.
func Parse(value string) (Request, error) {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		return Request{}, errors.New(`empty value: write "true", the revision, or the JSON form`)
	case len(value) > maxLen:
		return Request{}, fmt.Errorf("value is %d bytes long, more than %d", len(value), maxLen)
	case strings.EqualFold(value, "false"):
		return Request{}, ErrNone
	case strings.EqualFold(value, "true"):
		return Request{}, nil
	case strings.HasPrefix(value, "{"):
		var r Request
		if err := json.Unmarshal([]byte(value), &r); err != nil {
			return Request{}, fmt.Errorf("value is not valid JSON: %w", err)
		}
		// What sluice writes back (the context, the record) must fit too:
		// invalid UTF-8 and characters JSON escapes grow when encoded.
		if n := len(Encode(r)); n > maxLen {
			return Request{}, fmt.Errorf("value encodes to %d bytes, more than %d", n, maxLen)
		}
		return r, nil
	case !revisionLike(value):
		return Request{}, fmt.Errorf("value %q is neither true, a revision nor the JSON form", value)
	}
	return Request{Revision: value}, nil
}

// maxRevisionLen bounds a revision written as the bare value: a
// pod-template hash, a controller revision's name or a commit SHA.
const maxRevisionLen = 253

// revisionLike tells whether v can be a revision written as the bare
// value: a name of letters, digits and . _ - : @ / (a pod-template hash,
// a controller revision's name, a commit SHA, "main@sha1:<sha>"). Anything
// else (spaces, quotes, bytes that are not printable ASCII) is refused,
// so that every value accepted encodes back within maxLen.
func revisionLike(v string) bool {
	if len(v) > maxRevisionLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == '-' || c == ':' || c == '@' || c == '/':
		default:
			return false
		}
	}
	return true
}

// Encode writes r as the JSON annotation value.
func Encode(r Request) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Patch is the JSON merge patch, to marshal, that writes r into the annotation key of a
// Rollout (sluice.dev/abort or sluice.dev/retry). The GitOps controller's rollbacks and
// retries and kubectl sluice's abort and retry write their requests with it.
func Patch(key string, r Request) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: Encode(r)}}}
}

// Resolve combines an annotation value with its context (the value of the
// context annotation the webhook writes): the context supplies who and
// when, and the revision when the value names none. Without a context the
// request keeps what its value says; one without a time or a revision
// applies to nothing. A damaged context only loses who and when.
func Resolve(value, context string) (Request, error) {
	r, err := Parse(value)
	if err != nil {
		return Request{}, err
	}
	if context == "" {
		return r, nil
	}
	c, err := approval.ParseContext(context)
	if err != nil {
		return r, nil //nolint:nilerr // a damaged context only loses who and when
	}
	if r.Revision == "" {
		r.Revision = c.Revision
	}
	r.By = c.By
	at := c.At
	r.At = &at
	return r, nil
}

// NewerThan reports whether r was asked after t. A request without a time
// is never newer.
func (r Request) NewerThan(t time.Time) bool {
	return r.At != nil && r.At.After(t)
}

// Describe names the request for messages: "by alice via kubectl-sluice".
func (r Request) Describe() string {
	by := r.By
	if by == "" {
		by = "unknown"
	}
	via := r.Via
	if via == "" {
		via = "annotation"
	}
	return "by " + by + " via " + via
}
