package gitops

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/gitops/command"
)

// labelKey identifies a label as added once; a label on a pull request
// other than the release's own names it.
func (o Observation) labelKey(l Label) string {
	k := "label:" + l.Name + "@" + l.AddedAt.UTC().Format(time.RFC3339)
	if l.PullRequest != 0 && l.PullRequest != o.PullRequest {
		k += fmt.Sprintf("#%d", l.PullRequest)
	}
	return k
}

// prOf is the number of the pull request l is on.
func (o Observation) prOf(l Label) int {
	if l.PullRequest != 0 {
		return l.PullRequest
	}
	return o.PullRequest
}

// stop is a label or comment command that asks to stop the release (or,
// while it is aborted, to retry it), with who gave it.
type stop struct {
	action   Action
	rejected bool
	actor    Actor
	via, key string
	at       time.Time
	pr       int
	what     string
	// comment: a comment command, which counts only when written after the
	// release started (a label counts while it is on the pull request).
	comment bool
}

// stops lists the labels and comment commands for the Rollout that ask for
// action (rejected: a rejection), labels first.
func (o Observation) stops(action Action, rejected bool) []stop {
	p, r := o.Policy, o.Rollout
	name, verb := p.RollbackLabel, command.Rollback
	switch {
	case action == ActionRetry:
		name, verb = p.RetryLabel, command.Retry
	case rejected:
		name, verb = p.RejectLabel, command.Reject
	}
	var out []stop
	for _, l := range o.Labels {
		if name == "" || !strings.EqualFold(l.Name, name) {
			continue
		}
		what := fmt.Sprintf("label %s on pull request #%d", l.Name, o.prOf(l))
		if l.AddedBy != "" {
			what += " added by " + l.AddedBy
		}
		out = append(out, stop{action: action, rejected: rejected, actor: l.actor(), via: o.labelVia(), key: o.labelKey(l), at: l.AddedAt, pr: o.prOf(l), what: what})
	}
	for _, c := range o.Comments {
		if c.Problem != "" || c.Verb != verb || !c.Addresses(r.Namespace, r.Name) {
			continue
		}
		out = append(out, stop{action: action, rejected: rejected, actor: c.Actor, via: viaOf(o.Host, viaComment), key: commentKey(c), at: c.At,
			pr: c.PullRequest, what: describeComment(c), comment: true})
	}
	return out
}

// intent is the stop as the intent to apply.
func (s stop) intent() *Intent {
	return &Intent{Action: s.action, Rejected: s.rejected, By: s.actor.Login, Via: s.via, At: s.at, Key: s.key, PullRequest: s.pr}
}

// refusal is a Rejection of the stop.
func (s stop) refusal(reason, message string) Rejection {
	return Rejection{Reason: reason, Message: message, By: s.actor.Login, Via: s.via, At: s.at, PullRequest: s.pr}
}

// fromStops finds the intent that stops the release: a rejection first (the
// reject label or "/sluice reject": a rollback reported as a rejection),
// then a rollback. Either is anyone's with the permission, the release's
// authors too.
func (o Observation) fromStops() (*Intent, []Rejection) {
	var rejections []Rejection
	for _, rejected := range []bool{true, false} {
		for _, s := range o.stops(ActionRollback, rejected) {
			if reason, msg := o.refuseStop(s); reason != "" {
				if reason != ReasonNotPaused {
					rejections = append(rejections, s.refusal(reason, msg))
				}
				continue
			}
			if o.applied(s.key) {
				continue // applied; the Rollout has not moved on yet
			}
			return s.intent(), rejections
		}
	}
	return nil, rejections
}

// refuseStop says why a stop or retry applies to nothing ("" when it
// applies).
func (o Observation) refuseStop(s stop) (reason, message string) {
	r := o.Rollout
	predates := ReasonLabelPredatesPause
	again := "remove it and add it again"
	if s.comment {
		predates, again = ReasonCommentPredatesPause, "comment again"
	}
	switch {
	case s.action == ActionRetry && r.Aborted == nil:
		return ReasonNotPaused, s.what + ": no release is aborted"
	case s.action != ActionRetry && !r.InRelease:
		return ReasonNotPaused, s.what + ": no release in progress"
	case s.actor.Login == "":
		return ReasonUnknownActor, s.what + ": the host does not say who added it; " + again
	}
	if reason, message := o.Policy.refuseActor(s.actor, s.what); reason != "" {
		return reason, message
	}
	switch {
	case s.action == ActionRetry && !s.at.After(r.Aborted.At):
		return predates, fmt.Sprintf("%s: given at %s, before the release was aborted at %s; %s to retry",
			s.what, s.at.UTC().Format(time.RFC3339), r.Aborted.At.UTC().Format(time.RFC3339), again)
	case s.action != ActionRetry && s.comment && !r.StartedAt.IsZero() && s.at.Before(r.StartedAt):
		return predates, fmt.Sprintf("%s: written at %s, before the release started at %s; %s to stop it",
			s.what, s.at.UTC().Format(time.RFC3339), r.StartedAt.UTC().Format(time.RFC3339), again)
	}
	return "", ""
}
