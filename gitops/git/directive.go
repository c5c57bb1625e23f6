package git

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Action is what a commit trailer asks of a Rollout.
type Action string

// The actions, each with its trailer key.
const (
	// ActionApprove approves the paused steps of a Rollout up to and
	// including Step: trailer "Sluice-Approve".
	ActionApprove Action = "Approve"
	// ActionPromoteFull approves every remaining step: trailer
	// "Sluice-Promote-Full".
	ActionPromoteFull Action = "PromoteFull"
	// ActionRollback asks to roll the Rollout back to its stable revision:
	// trailer "Sluice-Rollback".
	ActionRollback Action = "Rollback"
)

// Trailer keys of the actions.
const (
	TrailerApprove     = "Sluice-Approve"
	TrailerPromoteFull = "Sluice-Promote-Full"
	TrailerRollback    = "Sluice-Rollback"
)

// trailerKey returns the trailer key of an action.
func (a Action) trailerKey() string {
	switch a {
	case ActionApprove:
		return TrailerApprove
	case ActionPromoteFull:
		return TrailerPromoteFull
	case ActionRollback:
		return TrailerRollback
	}
	return ""
}

// actionOf returns the action of a trailer key, compared case-insensitively.
func actionOf(key string) (Action, bool) {
	switch {
	case strings.EqualFold(key, TrailerApprove):
		return ActionApprove, true
	case strings.EqualFold(key, TrailerPromoteFull):
		return ActionPromoteFull, true
	case strings.EqualFold(key, TrailerRollback):
		return ActionRollback, true
	}
	return "", false
}

// maxRevisionLen bounds a revision value, far above a SHA-256 in hex or a
// Flux revision such as main@sha1:<40 hex>.
const maxRevisionLen = 128

// Directive is one sluice trailer of a commit message: an action on one
// Rollout.
type Directive struct {
	// Action asked for.
	Action Action
	// Namespace and Name of the Rollout.
	Namespace, Name string
	// Step is the last step approved, counted from 1 (ActionApprove only).
	Step int32
	// Revision, when given, pins the directive to one revision: a commit
	// SHA (full or abbreviated) or a canary revision. A directive pinned to
	// another revision than the one being released applies to nothing.
	Revision string
}

// String formats d as the trailer line that parses back to it, e.g.
// "Sluice-Approve: shop/checkout step=2 revision=1a2b3c4".
func (d Directive) String() string {
	var b strings.Builder
	b.WriteString(d.Action.trailerKey())
	b.WriteString(": ")
	b.WriteString(d.Namespace)
	b.WriteByte('/')
	b.WriteString(d.Name)
	if d.Action == ActionApprove {
		b.WriteString(" step=")
		b.WriteString(strconv.FormatInt(int64(d.Step), 10))
	}
	if d.Revision != "" {
		b.WriteString(" revision=")
		b.WriteString(d.Revision)
	}
	return b.String()
}

// ParseDirectives reads the sluice trailers of a commit message (see
// Trailers for what a trailer is). Grammar of the value, parameters
// separated by blanks or commas:
//
//	Sluice-Approve: <namespace>/<rollout> step=<n> [revision=<rev>]
//	Sluice-Promote-Full: <namespace>/<rollout> [revision=<rev>]
//	Sluice-Rollback: <namespace>/<rollout> [revision=<rev>]
//
// A message may hold directives for several Rollouts, one each. It returns
// the valid directives, in message order, and an error naming every trailer
// it ignored: a malformed one, or all of a Rollout's when the message gives
// that Rollout different directives (a repeated identical one counts once).
func ParseDirectives(message string) ([]Directive, error) {
	var (
		parsed []Directive
		errs   []error
	)
	for _, t := range Trailers(message) {
		action, ok := actionOf(t.Key)
		if !ok {
			continue
		}
		d, err := parseDirective(action, t.Value)
		if err != nil {
			errs = append(errs, fmt.Errorf("trailer %q: %w", t.Key+": "+t.Value, err))
			continue
		}
		parsed = append(parsed, d)
	}
	out := make([]Directive, 0, len(parsed))
	conflict := map[string]bool{}
	first := map[string]Directive{}
	for _, d := range parsed {
		key := d.Namespace + "/" + d.Name
		if prev, ok := first[key]; ok {
			if prev != d && !conflict[key] {
				conflict[key] = true
				errs = append(errs, fmt.Errorf("rollout %s: the message gives it different directives (%q, %q); none applies", key, prev.String(), d.String()))
			}
			continue
		}
		first[key] = d
	}
	for _, d := range parsed {
		key := d.Namespace + "/" + d.Name
		if conflict[key] || first[key] != d {
			continue
		}
		out = append(out, d)
		delete(first, key) // a repeat is not added again
	}
	return out, errors.Join(errs...)
}

// parseDirective parses the value of one sluice trailer.
func parseDirective(action Action, value string) (Directive, error) {
	fields := strings.FieldsFunc(value, func(r rune) bool {
		return r == ',' || r < 0x80 && isSpace(byte(r))
	})
	if len(fields) == 0 {
		return Directive{}, errors.New("no rollout: write <namespace>/<rollout>")
	}
	d := Directive{Action: action}
	ns, name, ok := strings.Cut(fields[0], "/")
	if !ok {
		return Directive{}, fmt.Errorf("rollout %q is not <namespace>/<rollout>", fields[0])
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return Directive{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Directive{}, fmt.Errorf("rollout name %q: %s", name, strings.Join(errs, "; "))
	}
	d.Namespace, d.Name = ns, name
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Directive{}, fmt.Errorf("parameter %q is not key=value", f)
		}
		if seen[k] {
			return Directive{}, fmt.Errorf("parameter %q given twice", k)
		}
		seen[k] = true
		switch {
		case k == "step" && action == ActionApprove:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 || v[0] == '+' {
				return Directive{}, fmt.Errorf("step %q is not a step number (1 or more)", v)
			}
			d.Step = int32(n)
		case k == "revision":
			if err := checkRevision(v); err != nil {
				return Directive{}, err
			}
			d.Revision = v
		default:
			return Directive{}, fmt.Errorf("parameter %q is unknown; %s takes %s", k, action.trailerKey(), action.params())
		}
	}
	if action == ActionApprove && d.Step == 0 {
		return Directive{}, errors.New("no step: write step=<n>, the last step approved")
	}
	return d, nil
}

// params names the parameters an action takes, for error messages.
func (a Action) params() string {
	if a == ActionApprove {
		return "step and revision"
	}
	return "revision"
}

// checkRevision accepts letters, digits and . _ - : @ / (commit SHAs, canary
// revisions, Flux revisions such as main@sha1:<sha>).
func checkRevision(v string) error {
	if v == "" || len(v) > maxRevisionLen {
		return fmt.Errorf("revision must be 1 to %d characters", maxRevisionLen)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isAlnum(c) || strings.IndexByte("._-:@/", c) >= 0 {
			continue
		}
		return fmt.Errorf("revision %q: character %q is not allowed", v, c)
	}
	return nil
}
