// Package prview renders a Rollout's release for its pull request: the text of sluice's
// sticky comment, and the title, summary and buttons of its GitHub check run. It is pure:
// the GitOps controller gathers a Release (from release/progress, the one read model the
// web view and kubectl sluice share, and from the GitGate's status) and every host shows
// what these functions make of it, so that the comment, the check run and their golden
// tests never disagree.
package prview

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// State is where a release is, as the pull request shows it.
type State string

// The states of a release.
const (
	// StateInProgress: the release is between steps, or pausing for a set time.
	StateInProgress State = "InProgress"
	// StateWaiting: the current step waits for an approval.
	StateWaiting State = "Waiting"
	// StateSucceeded: every step is done.
	StateSucceeded State = "Succeeded"
	// StateFailed: the release was rolled back, rejected or aborted.
	StateFailed State = "Failed"
)

// Release is what the pull request shows of one Rollout's release.
type Release struct {
	// Rollout names the Rollout, "namespace/name".
	Rollout string
	// Commit is the commit being released.
	Commit string
	// State is where the release is.
	State State
	// Headline says it in one line (the commit status's description), e.g. "step 1/3 paused:
	// add label sluice/approve to continue".
	Headline string
	// Step is the current step (from 1) and Steps how many there are.
	Step, Steps int32
	// StepList describes each step, in order.
	StepList []Step
	// Revisions are the pods and requests of each revision, the stable one first.
	Revisions []Revision
	// TrafficNote says how requests are split (weights on the routes, or over ready pods).
	TrafficNote string
	// Approvals are the approvals, promotions, rollbacks and retries applied, oldest first.
	Approvals []Approval
	// Refused are the latest intents that applied to nothing, and why, newest last.
	Refused []Refusal
	// Quorum is where the approval of the step the release waits at stands: who approved it
	// so far and what it still waits for; nil while it waits for no approval.
	Quorum *Quorum
	// PullRequest is the number of the pull request the text is shown on (0: none).
	PullRequest int
	// Aborted: the release is held on the stable revision until a retry or a new commit.
	Aborted bool
	// Commands are the names of the labels that act on the release and the ways they can be
	// given.
	Commands Commands
}

// Step is one step of a release.
type Step struct {
	// Replicas is the step's pods as written ("1", "50%").
	Replicas string
	// Traffic is the step's traffic ("10%", "2 request match(es)"), empty when it has none.
	Traffic string
	// Pause says how the step waits once done ("until approved", "30s", "none").
	Pause string
	// Mark is where the step is: done, current, paused, pending or aborted.
	Mark string
}

// The marks of a step (release/progress's step states).
const (
	MarkDone    = "done"
	MarkCurrent = "current"
	MarkPaused  = "paused"
	MarkPending = "pending"
	MarkAborted = "aborted"
)

// Revision is the pods and requests of one revision.
type Revision struct {
	// Name is the revision (the pod-template hash, or the workload's revision).
	Name string
	// Role is what it is to the release: stable or canary.
	Role string
	// Pods is how many pods the release wants on it at the current step.
	Pods int32
	// Percent is its share of requests, -1 when unknown.
	Percent int
}

// Approval is an intent the gate applied.
type Approval struct {
	// Action is Approve, PromoteFull, Rollback or Retry.
	Action string
	// Step is the last step approved.
	Step int32
	// By is who gave it, Via how.
	By, Via string
	// At is when.
	At time.Time
	// Rejected marks a rollback that rejected the commit.
	Rejected bool
}

// Quorum is where the approval of one step stands.
type Quorum struct {
	// Step is the step (from 1) the approvals are for.
	Step int32
	// Needed is how many different people must approve it.
	Needed int32
	// Approvals are the approvals that count so far, one per person, oldest first.
	Approvals []GivenApproval
	// Waiting says what is still missing, one entry per requirement: "1 more", "an approval
	// by security (alice, acme/sre)".
	Waiting []string
}

// GivenApproval is one person's approval toward a quorum.
type GivenApproval struct {
	// Action is Approve (the step) or PromoteFull (every remaining step).
	Action string
	// By is who approved, Via how (github-label, gitlab-comment, github-check-run, git-trailer, ...).
	By, Via string
	// At is when.
	At time.Time
	// Commit is the Git commit the approval came from, when it did.
	Commit string
	// PullRequest is the pull request it was given on, when it was.
	PullRequest int
	// Required names the required approver sets the approver counts for.
	Required []string
}

// Refusal is an intent that applied to nothing.
type Refusal struct {
	// Reason is its event reason, Message what it was and why it was refused.
	Reason, Message string
}

// Commands are the ways to act on the release.
type Commands struct {
	// Approve, PromoteFull, Rollback, Reject and Retry name the labels.
	Approve, PromoteFull, Rollback, Reject, Retry string
	// Comments: the host reads `/sluice ...` comment commands on the pull request.
	Comments bool
	// Buttons: the check run offers buttons (sluice runs as a GitHub App).
	Buttons bool
}

// The identifiers of the check run's buttons: what a press delivers back.
const (
	// ButtonApprovePrefix starts the identifier of "Approve step N": "approve-N".
	ButtonApprovePrefix = "approve-"
	// ButtonPromote promotes every remaining step.
	ButtonPromote = "promote"
	// ButtonRollback rolls the release back.
	ButtonRollback = "rollback"
)

// Button is what a button's identifier asks for.
type Button struct {
	// Kind is ButtonApprovePrefix (approve Step), ButtonPromote or ButtonRollback.
	Kind string
	// Step is the step an approve button approves.
	Step int32
}

// ParseButton reads a button's identifier; false when it is none of sluice's.
func ParseButton(identifier string) (Button, bool) {
	switch identifier {
	case ButtonPromote, ButtonRollback:
		return Button{Kind: identifier}, true
	}
	n, ok := strings.CutPrefix(identifier, ButtonApprovePrefix)
	if !ok {
		return Button{}, false
	}
	step, err := strconv.ParseInt(n, 10, 32)
	if err != nil || step < 1 || strconv.FormatInt(step, 10) != n {
		return Button{}, false
	}
	return Button{Kind: ButtonApprovePrefix, Step: int32(step)}, true
}

// Identifier is the button's identifier.
func (b Button) Identifier() string {
	if b.Kind == ButtonApprovePrefix {
		return fmt.Sprintf("%s%d", ButtonApprovePrefix, b.Step)
	}
	return b.Kind
}

// short is a commit or revision shortened for people.
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// stamp is a time as the comment shows it: to the minute, in UTC.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
