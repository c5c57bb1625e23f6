package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status of a GitGate: what it last saw of the branch and of each bound
// Rollout, and what it did.

// GitGateStatus reports what the gate last saw and did.
type GitGateStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling and Stalled, as Flux's controllers
	// report them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Head is the branch head last read.
	// +optional
	Head string `json:"head,omitempty"`
	// BoundRollouts is how many Rollouts the selector picks.
	// +optional
	BoundRollouts int32 `json:"boundRollouts,omitempty"`
	// Rollouts reports each bound Rollout.
	// +kubebuilder:validation:MaxItems=200
	// +listType=map
	// +listMapKey=name
	// +optional
	Rollouts []BoundRollout `json:"rollouts,omitempty"`
	// ReconcileRequestStatus records the last reconcile.fluxcd.io/requestedAt
	// handled.
	meta.ReconcileRequestStatus `json:",inline"`
}

// BoundRollout is what the gate knows of one bound Rollout.
type BoundRollout struct {
	// Name of the Rollout.
	Name string `json:"name"`
	// Revision is the commit being released (or last released).
	// +optional
	Revision string `json:"revision,omitempty"`
	// CanaryRevision is the Rollout's canary revision the approvals are
	// pinned to.
	// +optional
	CanaryRevision string `json:"canaryRevision,omitempty"`
	// StableRevision is the Rollout's stable revision when the release of
	// Revision was seen: the workload going back to it is a rollback of
	// Revision (a revert synced), not a new release.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`
	// Commits are the release's commits besides Revision: the commits of
	// the branch's first-parent line, since the commit the gate followed
	// before, that changed what the GitOps tool applies for the workload
	// (its Kustomization's or Application's path), oldest first. Each shows
	// the release's commit status, and a label on any of their pull
	// requests counts.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Commits []string `json:"commits,omitempty"`
	// PullRequest is the number of the pull request that brought Revision
	// (0 when none was found).
	// +optional
	PullRequest int `json:"pullRequest,omitempty"`
	// Step is the current step, from 1; Steps how many there are.
	// +optional
	Step int32 `json:"step,omitempty"`
	// Steps is how many steps the release has.
	// +optional
	Steps int32 `json:"steps,omitempty"`
	// Posted is the commit status last posted for the Rollout.
	// +optional
	Posted *PostedStatus `json:"posted,omitempty"`
	// Approvals are the approvals, promotions and rollbacks the gate applied
	// to the release of Revision, oldest first.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Approvals []AppliedApproval `json:"approvals,omitempty"`
	// Refused are the latest labels, comments, reviews and trailers for the
	// release of Revision that applied to nothing, with the reason (newest
	// last).
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Refused []RefusedIntent `json:"refused,omitempty"`
	// Quorum is where the approval of the step the release waits at stands:
	// who approved it so far and what it still waits for. Nil while the
	// release waits for no approval.
	// +optional
	Quorum *QuorumStatus `json:"quorum,omitempty"`
	// Message says what the Rollout waits for, or why the gate cannot act.
	// +optional
	Message string `json:"message,omitempty"`
}

// PostedStatus is a commit status as posted.
type PostedStatus struct {
	// SHA is the commit it was posted on.
	SHA string `json:"sha"`
	// Context of the status.
	Context string `json:"context"`
	// State: pending, success, failure or error.
	State string `json:"state"`
	// Description of the status.
	// +optional
	Description string `json:"description,omitempty"`
}

// RefusedIntent is a label, comment, review or trailer that applied to
// nothing.
type RefusedIntent struct {
	// Reason is the event reason, e.g. LabelPredatesPause.
	Reason string `json:"reason"`
	// Message names the label or trailer and why it was refused.
	Message string `json:"message"`
	// By is who asked: a login on the host, or a committer's e-mail
	// address ("" when unknown).
	// +optional
	By string `json:"by,omitempty"`
	// Via is how: github-label, github-comment, github-review,
	// git-trailer, ... (as AppliedApproval's).
	// +optional
	Via string `json:"via,omitempty"`
	// At is when they asked.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
	// Commit is the Git commit the intent came from, when it did.
	// +optional
	Commit string `json:"commit,omitempty"`
	// PullRequest is the pull request the intent is on, when it is.
	// +optional
	PullRequest int `json:"pullRequest,omitempty"`
}

// QuorumStatus is where the approval of one step stands.
type QuorumStatus struct {
	// Step is the step (from 1) the approvals are for.
	Step int32 `json:"step"`
	// Needed is how many different people must approve it.
	Needed int32 `json:"needed"`
	// Approvals are the approvals that count so far, one per person,
	// oldest first.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Approvals []GivenApproval `json:"approvals,omitempty"`
	// Waiting says what is still missing, one entry per requirement: "1
	// more", "an approval by security (alice, acme/sre)".
	// +kubebuilder:validation:MaxItems=11
	// +optional
	Waiting []string `json:"waiting,omitempty"`
}

// GivenApproval is one person's approval toward a quorum.
type GivenApproval struct {
	// Action is Approve (the step) or PromoteFull (every remaining step,
	// which also approves the step).
	Action string `json:"action"`
	// By is who approved: a login on the host, or a committer's e-mail
	// address.
	By string `json:"by"`
	// Via is how: github-label, github-comment, github-review,
	// github-check-run, git-trailer, git (and gitea-..., gitlab-...).
	Via string `json:"via"`
	// At is when they approved (the label added, the comment written or
	// last edited, the review submitted).
	At metav1.Time `json:"at"`
	// Commit is the Git commit the approval came from, when it did.
	// +optional
	Commit string `json:"commit,omitempty"`
	// PullRequest is the pull request the approval was given on, when it
	// was.
	// +optional
	PullRequest int `json:"pullRequest,omitempty"`
	// Required names the required approver sets (spec.approval
	// .requiredApprovers) this approver counts for.
	// +optional
	Required []string `json:"required,omitempty"`
	// Keys identify what gave it (a label and when it was added, a
	// comment as last edited, a review, a commit), so that each counts
	// once.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Keys []string `json:"keys,omitempty"`
}

// AppliedApproval is an approval, full promotion or rollback the gate applied.
type AppliedApproval struct {
	// Action is Approve, PromoteFull, Rollback or Retry.
	Action string `json:"action"`
	// Step is the last step approved (0 for a rollback).
	// +optional
	Step int32 `json:"step,omitempty"`
	// By is who gave it: a login on the host, a committer's e-mail address
	// or a commit SHA; for a quorum, every approver, joined with ", ".
	By string `json:"by"`
	// Via is how: github-label, github-comment, github-review,
	// github-check-run, git-trailer, git-revert, git, approval-timeout
	// (and gitea-..., gitlab-... for the other hosts); for a quorum, every
	// way its approvers used, joined with "+".
	Via string `json:"via"`
	// At is when it was given.
	At metav1.Time `json:"at"`
	// Key identifies what gave it (a label and when it was added, or a
	// commit), so that it is applied once.
	// +optional
	Key string `json:"key,omitempty"`
	// Rejected marks a Rollback that rejected the commit (the reject
	// label or command): its reason, events and commit status say
	// "rejected".
	// +optional
	Rejected bool `json:"rejected,omitempty"`
	// Commit is the Git commit it came from (a revert, a trailer's commit),
	// when it did.
	// +optional
	Commit string `json:"commit,omitempty"`
	// PullRequest is the pull request it was given on, when it was.
	// +optional
	PullRequest int `json:"pullRequest,omitempty"`
	// Approvers are the individual approvals that made up the quorum of an
	// Approve or PromoteFull, one per person, oldest first.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Approvers []GivenApproval `json:"approvers,omitempty"`
}
