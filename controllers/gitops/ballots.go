package gitops

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// ballot is one person's approval of the step a release waits at (up to
// a later step, or of every step), from any source: a label, a comment
// command, a review, a trailer or a declarative approval. Decide gathers
// the ballots that the policy lets count, then counts them (quorum.go).
type ballot struct {
	// action is ActionApprove or ActionPromoteFull; upTo the last step it
	// approves.
	action Action
	upTo   int32
	// by is a login on the host (host) or a Git identity (an e-mail, or a
	// signer's identity); identities are every identity of a Git signer.
	by         string
	host       bool
	identities []string
	// via, at, key, commit and pr: how, when, what gave it, and from which
	// commit and pull request.
	via    string
	at     time.Time
	key    string
	commit string
	pr     int
	// what names it in messages.
	what string
}

// The ways an intent reaches sluice beside labels (see labelVia): a
// comment command is "<host>-comment", a review "<host>-review".
const (
	viaComment = "comment"
	viaReview  = "review"
)

// viaOf is how an intent of kind ("label", "comment", "review") on host is
// recorded: github-comment, gitea-review, ...
func viaOf(host scm.Host, kind string) string {
	if host == "" {
		host = scm.HostGitHub
	}
	return string(host) + "-" + kind
}

// More reasons of the events a refused intent raises.
const (
	// ReasonCommentPredatesPause: the comment was written (or last edited)
	// before the step paused, or a stop before the release started.
	ReasonCommentPredatesPause = "CommentPredatesPause"
	// ReasonReviewPredatesPause: the review was submitted before the step
	// paused.
	ReasonReviewPredatesPause = "ReviewPredatesPause"
	// ReasonInvalidCommand: a comment line starts with /sluice and is not
	// a command.
	ReasonInvalidCommand = "InvalidCommand"
	// ReasonOtherStep: a command names a step the release does not wait
	// at.
	ReasonOtherStep = "OtherStep"
	// ReasonApprovalExpired: the approval is older than the policy's
	// expireAfter.
	ReasonApprovalExpired = "ApprovalExpired"
	// ReasonApprovalWithdrawn: the approver requested changes since.
	ReasonApprovalWithdrawn = "ApprovalWithdrawn"
	// ReasonGitApprovalNotCounted: an approval from Git, where the policy
	// counts approvals of the host's users.
	ReasonGitApprovalNotCounted = "GitApprovalNotCounted"
	// ReasonAuthorsUnknown: the authors of the release's commits could not
	// be read, so the approver is not known not to be one of them.
	ReasonAuthorsUnknown = "AuthorsUnknown"
)

// commentKey identifies a comment as written or last edited: an edit is a
// new intent.
func commentKey(c CommentCommand) string {
	return fmt.Sprintf("comment:%d@%s", c.Comment, c.At.UTC().Format(time.RFC3339))
}

// reviewKey identifies a review.
func reviewKey(r ReviewVote) string {
	if r.ID != 0 {
		return fmt.Sprintf("review:%d", r.ID)
	}
	return fmt.Sprintf("review:%s#%d@%s", strings.ToLower(r.Author), r.PullRequest, r.SubmittedAt.UTC().Format(time.RFC3339))
}

// describeComment names a comment command in messages.
func describeComment(c CommentCommand) string {
	line := c.Text
	if c.Problem == "" {
		line = c.String()
	}
	what := fmt.Sprintf("comment %q on pull request #%d by %s", line, c.PullRequest, c.Login)
	if c.Edited {
		what += " (edited)"
	}
	return what
}

// describeReview names a review in messages.
func describeReview(r ReviewVote) string {
	return fmt.Sprintf("review of pull request #%d by %s", r.PullRequest, r.Author)
}

// refusal builds a Rejection of the intent of b.
func (b ballot) refusal(reason, message string) Rejection {
	r := Rejection{Reason: reason, Message: message, By: b.by, Via: b.via, At: b.at, Commit: b.commit, PullRequest: b.pr}
	return r
}

// hostBallot checks an approval given on the host by a (a label, a
// comment command or a review) for the step the release waits at, and
// returns it as a ballot; ok is false when it does not count, with the
// rejection to report (none for an approval with nothing to apply to).
// predates is the reason to give an approval given before the step paused.
func (o Observation) hostBallot(b ballot, a Actor, predates string) (ballot, *Rejection, bool) {
	r := o.Rollout
	switch {
	case !r.InRelease || !r.Paused:
		return b, nil, false // nothing waits for it
	case a.Login == "":
		rej := b.refusal(ReasonUnknownActor, b.what+": the host does not say who did it; do it again")
		return b, &rej, false
	}
	if reason, msg := o.Policy.refuseActor(a, b.what); reason != "" {
		rej := b.refusal(reason, msg)
		return b, &rej, false
	}
	if reason, msg := o.Policy.refuseSelfApproval(a.Login, b.action, o.authored(a.Login, true), b.what); reason != "" {
		rej := b.refusal(reason, msg)
		return b, &rej, false
	}
	if !o.Policy.AllowSelfApproval && o.HostAuthorsUnread != "" {
		rej := b.refusal(ReasonAuthorsUnknown, fmt.Sprintf("%s: whether %s authored the release is not known (%s); it counts once it is", b.what, a.Login, o.HostAuthorsUnread))
		return b, &rej, false
	}
	if !b.at.After(r.PausedAt) {
		// Both times have whole seconds: an approval of the same second as
		// the pause may be older than it, and counts for nothing.
		rej := b.refusal(predates, fmt.Sprintf("%s: given at %s, before step %d/%d paused at %s; give it again to approve the step",
			b.what, b.at.UTC().Format(time.RFC3339), r.Step, r.Steps, r.PausedAt.UTC().Format(time.RFC3339)))
		return b, &rej, false
	}
	return b, nil, true
}

// ballots gathers the approvals that count for the step the release waits
// at (or, for a trailer approving ahead, a later one), and refuses the
// others, saying why.
func (o Observation) ballots() ([]ballot, []Rejection) {
	var (
		out  []ballot
		rejs []Rejection
	)
	keep := func(b ballot, rej *Rejection, ok bool) {
		if rej != nil {
			rejs = append(rejs, *rej)
		}
		if ok && !o.applied(b.key) {
			out = append(out, b)
		}
	}
	p, r := o.Policy, o.Rollout
	for _, l := range o.Labels {
		b := ballot{by: l.AddedBy, host: true, via: o.labelVia(), at: l.AddedAt, key: o.labelKey(l), pr: o.prOf(l)}
		switch {
		case p.ApproveLabel != "" && strings.EqualFold(l.Name, p.ApproveLabel):
			b.action, b.upTo = ActionApprove, r.Step
		case p.PromoteFullLabel != "" && strings.EqualFold(l.Name, p.PromoteFullLabel):
			b.action, b.upTo = ActionPromoteFull, r.Steps
		default:
			continue
		}
		b.what = fmt.Sprintf("label %s on pull request #%d", l.Name, b.pr)
		if l.AddedBy != "" {
			b.what += " added by " + l.AddedBy
		}
		keep(o.hostBallot(b, l.actor(), ReasonLabelPredatesPause))
	}
	for _, c := range o.Comments {
		if c.Problem != "" || !c.Addresses(r.Namespace, r.Name) || c.Verb != command.Approve && c.Verb != command.PromoteFull {
			continue
		}
		b := ballot{by: c.Login, host: true, via: viaOf(o.Host, viaComment), at: c.At, key: commentKey(c), pr: c.PullRequest, what: describeComment(c),
			action: ActionApprove, upTo: r.Step}
		if c.Verb == command.PromoteFull {
			b.action, b.upTo = ActionPromoteFull, r.Steps
		}
		if c.Step != 0 && r.InRelease && r.Paused && c.Step != r.Step {
			reason, msg := ReasonOtherStep, fmt.Sprintf("%s: the release waits at step %d/%d, not %d", b.what, r.Step, r.Steps, c.Step)
			if c.Step < r.Step {
				reason, msg = ReasonOlderStep, fmt.Sprintf("%s: step %d is passed, the release is at step %d/%d", b.what, c.Step, r.Step, r.Steps)
			}
			rej := b.refusal(reason, msg)
			keep(b, &rej, false)
			continue
		}
		keep(o.hostBallot(b, c.Actor, ReasonCommentPredatesPause))
	}
	for _, rv := range o.Reviews {
		if rv.State != scm.ReviewApproved {
			continue
		}
		b := ballot{by: rv.Author, host: true, via: viaOf(o.Host, viaReview), at: rv.SubmittedAt, key: reviewKey(rv), pr: rv.PullRequest,
			what: describeReview(rv), action: ActionApprove, upTo: r.Step}
		keep(o.hostBallot(b, rv.Actor, ReasonReviewPredatesPause))
	}
	presses, more := o.pressBallots()
	rejs = append(rejs, more...)
	for _, b := range presses {
		keep(b, nil, true)
	}
	trailers, more := o.trailerBallots()
	rejs = append(rejs, more...)
	for _, b := range trailers {
		keep(o.gitBallot(b))
	}
	if b, rej := o.declaredBallot(); b != nil || rej != nil {
		if rej != nil {
			rejs = append(rejs, *rej)
		} else {
			keep(o.gitBallot(*b))
		}
	}
	out, more = o.withdrawn(out)
	rejs = append(rejs, more...)
	out, more = o.unexpired(out)
	return out, append(rejs, more...)
}

// invalidCommands reports the comment lines that start like a command and
// are not one, written since the release started (or, while it is aborted,
// since it was).
func (o Observation) invalidCommands() []Rejection {
	since := o.Rollout.StartedAt
	if ab := o.Rollout.Aborted; ab != nil {
		since = ab.At
	}
	var out []Rejection
	for _, c := range o.Comments {
		if c.Problem == "" || c.At.Before(since) {
			continue
		}
		out = append(out, Rejection{Reason: ReasonInvalidCommand, By: c.Login, Via: viaOf(o.Host, viaComment), At: c.At, PullRequest: c.PullRequest,
			Message: describeComment(c) + ": " + c.Problem})
	}
	return out
}

// gitBallot checks the separation of duties and the quorum rules of an
// approval from Git.
func (o Observation) gitBallot(b ballot) (ballot, *Rejection, bool) {
	for _, id := range append([]string{b.by}, b.identities...) {
		if reason, msg := o.Policy.refuseSelfApproval(id, b.action, o.authored(id, false), b.what); reason != "" {
			rej := b.refusal(reason, msg)
			return b, &rej, false
		}
	}
	if !o.Policy.AllowSelfApproval && o.GitAuthorsUnread != "" {
		rej := b.refusal(ReasonAuthorsUnknown, fmt.Sprintf("%s: whether %s authored the release is not known (%s); it counts once it is", b.what, b.by, o.GitAuthorsUnread))
		return b, &rej, false
	}
	if o.Host != "" && (o.Policy.quorum() > 1 || len(o.Policy.requiredFor(o.target(), b.upTo)) > 0) {
		rej := b.refusal(ReasonGitApprovalNotCounted, fmt.Sprintf("%s: the step needs approvals by people of %s (%d of them, or required approvers), and a commit's author cannot be told apart from them; approve on the pull request",
			b.what, o.Host, o.Policy.quorum()))
		return b, &rej, false
	}
	return b, nil, true
}

// target is the step an approval must reach: the step the release waits
// at, or (while a step is in progress) the next one.
func (o Observation) target() int32 {
	if o.Rollout.Paused {
		return o.Rollout.Step
	}
	return o.Rollout.Step + 1
}

// trailerBallots reads the approving trailers as ballots, refusing those
// that apply to nothing.
func (o Observation) trailerBallots() ([]ballot, []Rejection) {
	var (
		out  []ballot
		rejs []Rejection
	)
	for _, c := range o.Trailers {
		if o.applied("commit:" + c.SHA) {
			continue
		}
		for _, dir := range c.Directives {
			if dir.Action == git.ActionRollback {
				continue // a stop (trailerStop)
			}
			b, reason, msg := o.trailerBallot(c, dir)
			if reason != "" {
				rejs = append(rejs, Rejection{Reason: reason, Message: msg, By: c.Identity, Via: ViaTrailer, At: c.When, Commit: c.SHA})
				continue
			}
			if b != nil {
				out = append(out, *b)
			}
		}
	}
	return out, rejs
}

// trailerBallot reads one approving directive of a trailer commit.
func (o Observation) trailerBallot(c TrailerCommit, dir git.Directive) (*ballot, string, string) {
	what := fmt.Sprintf("trailer %q in commit %s", dir.String(), short(c.SHA))
	r := o.Rollout
	switch {
	case !r.InRelease:
		return nil, "", "" // for a later release of this revision, or none
	case c.Unverified != "":
		return nil, ReasonUnverifiedCommit, what + ": " + c.Unverified
	case !o.Policy.committerAllowed(c):
		return nil, ReasonNotAllowed, what + ": " + c.Identity + " is not one of the allowed committers"
	case dir.Revision != "" && !o.namesRevision(dir.Revision):
		return nil, ReasonOtherRevision, fmt.Sprintf("%s: names revision %s, the release is of %s (%s)", what, dir.Revision, short(o.Revision), r.CanaryRevision)
	}
	b := &ballot{by: c.Identity, identities: c.Identities, via: ViaTrailer, at: c.When, key: "commit:" + c.SHA, commit: c.SHA, what: what}
	switch dir.Action {
	case git.ActionPromoteFull:
		b.action, b.upTo = ActionPromoteFull, r.Steps
	case git.ActionApprove:
		if dir.Step < r.Step || dir.Step == r.Step && !r.Paused {
			return nil, ReasonOlderStep, fmt.Sprintf("%s: step %d is passed, the release is at step %d/%d", what, dir.Step, r.Step, r.Steps)
		}
		b.action, b.upTo = ActionApprove, min(dir.Step, r.Steps)
	default:
		return nil, "", ""
	}
	return b, "", ""
}

// withdrawn drops the host approvals their approver took back since by a
// review requesting changes, saying so.
func (o Observation) withdrawn(in []ballot) ([]ballot, []Rejection) {
	var (
		out  []ballot
		rejs []Rejection
	)
	for _, b := range in {
		var by *ReviewVote
		for i := range o.Reviews {
			rv := &o.Reviews[i]
			if b.host && rv.State == scm.ReviewChangesRequested && strings.EqualFold(rv.Author, b.by) && rv.SubmittedAt.After(b.at) {
				by = rv
			}
		}
		if by == nil {
			out = append(out, b)
			continue
		}
		rejs = append(rejs, b.refusal(ReasonApprovalWithdrawn, fmt.Sprintf("%s: withdrawn by their review of pull request #%d requesting changes at %s",
			b.what, by.PullRequest, by.SubmittedAt.UTC().Format(time.RFC3339))))
	}
	return out, rejs
}

// unexpired drops the approvals older than the policy's expireAfter,
// saying they expired.
func (o Observation) unexpired(in []ballot) ([]ballot, []Rejection) {
	if o.Policy.ExpireAfter <= 0 {
		return in, nil
	}
	var (
		out  []ballot
		rejs []Rejection
	)
	for _, b := range in {
		if o.Now.Sub(b.at) <= o.Policy.ExpireAfter {
			out = append(out, b)
			continue
		}
		rejs = append(rejs, b.refusal(ReasonApprovalExpired, fmt.Sprintf("%s: given at %s, expired after %s (spec.approval.expireAfter); approve again",
			b.what, b.at.UTC().Format(time.RFC3339), o.Policy.ExpireAfter)))
	}
	return out, rejs
}

// authored says how someone named id (a login on the host when host, else
// a Git identity) authored the release ("" when they did not): they
// opened one of its pull requests, or authored one of its commits.
func (o Observation) authored(id string, host bool) string {
	if id == "" {
		return ""
	}
	numbers := make([]int, 0, len(o.Authors))
	for n := range o.Authors {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	if host {
		for _, n := range numbers {
			if strings.EqualFold(o.Authors[n], id) {
				return fmt.Sprintf("opened pull request #%d", n)
			}
		}
	}
	for _, c := range o.CommitAuthors {
		if host && c.Login != "" && strings.EqualFold(c.Login, id) || !host && c.Email != "" && strings.EqualFold(c.Email, id) {
			return "authored commit " + short(c.SHA)
		}
	}
	return ""
}
