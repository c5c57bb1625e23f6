package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/release/approval"
)

// ViaGit is how an approval written in Git as the Rollout's
// sluice.dev/approve annotation, naming a commit, is recorded.
const ViaGit = "git"

// ReasonUnknownCommit says the commit that set a declarative approval is not
// found in the branch's history.
const ReasonUnknownCommit = "UnknownCommit"

// DeclaredApproval is the Rollout's sluice.dev/approve annotation when it
// names a commit ("step=2,revision=<sha>"), or when the GitOps tool applied
// it from Git whatever revision it names (approval.Applied), with the
// commit of the branch that set it.
type DeclaredApproval struct {
	// Value is the annotation's value.
	Value string
	// Step approved up to (approval.AllSteps: every step).
	Step int32
	// Revision is the commit SHA (7+ hex digits) or the canary revision it
	// names; "" when it names none.
	Revision string
	// Commit is the commit that set the value ("" when not found, with
	// NotFound saying why).
	Commit string
	// PullRequest is the pull request that brought Commit (0: unknown).
	PullRequest int
	// NotFound says why the commit that set the value was not found.
	NotFound string
	// Signer of Commit, as for a trailer: Identity, Identities and
	// Unverified.
	Signer TrailerCommit
}

// declared reads the Rollout's approve annotation when it is the gate's
// to apply: not the JSON form sluice writes; a value naming a commit
// (not the revision being released); or any value the GitOps tool applied
// from Git, which the Rollout controller leaves to the gate on a bound
// Rollout, so that it is recorded as the commit that set it, never as the
// GitOps tool. A value written by hand naming the canary revision is the
// Rollout controller's.
func declared(ro *rolloutsv1beta1.Rollout, canary string) *DeclaredApproval {
	v, ok := ro.Annotations[rolloutsv1beta1.ApproveAnnotation]
	if !ok || strings.HasPrefix(strings.TrimSpace(v), "{") {
		return nil
	}
	a, err := approval.Parse(v)
	if err != nil {
		return nil
	}
	names := approval.CommitRevision(a.Revision) && !strings.EqualFold(a.Revision, canary)
	if !names && !approval.Applied(ro, rolloutsv1beta1.ApproveAnnotation) {
		return nil
	}
	return &DeclaredApproval{Value: strings.TrimSpace(v), Step: a.Step, Revision: strings.ToLower(a.Revision)}
}

// observeDeclared finds, for a declarative approval of a release in
// progress, the commit of the branch that set its value under path (the
// directory the GitOps tool applies), who is vouched for it (its signer
// with a keyring, else its author) and its pull request.
func (r *Reconciler) observeDeclared(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o *Observation, path string) {
	d := declared(ro, o.Rollout.CanaryRevision)
	if d == nil || (!o.Rollout.InRelease && o.Rollout.Aborted == nil) {
		return
	}
	o.Declared = d
	a, err := s.c.git.Introduced(ctx, path, d.Value)
	if err != nil {
		d.NotFound = err.Error()
		if errors.Is(err, git.ErrCommitNotFound) {
			d.NotFound = fmt.Sprintf("no commit of branch %s sets it under %q", branchOf(s.gg), path)
		}
		return
	}
	d.Commit = a.SHA
	d.Signer = TrailerCommit{SHA: a.SHA, Identity: a.Author.Email, When: a.Committer.When}
	if s.c.keys != nil {
		signer, err := s.c.git.Verify(ctx, a.SHA, s.c.keys)
		switch {
		case err != nil:
			d.Signer.Unverified = err.Error()
		case len(signer.Identities) > 0:
			for _, id := range signer.Identities {
				d.Signer.Identities = append(d.Signer.Identities, identityEmail(id))
			}
			d.Signer.Identity = d.Signer.Identities[0]
		default:
			d.Signer.Identity = signer.Fingerprint
		}
	}
	if _, limited := s.rateLimited(r.Clock.Now()); s.c.scm == nil || limited {
		return
	}
	prs, err := s.c.scm.PullRequestsForCommit(ctx, a.Via)
	if err != nil {
		s.noteSCM(err)
		ctrl.LoggerFrom(ctx).Info("Pull request of a declarative approval not read", "sha", a.Via, "reason", err.Error())
		return
	}
	for _, pr := range prs {
		if pr.MergeCommitSHA == a.Via || d.PullRequest == 0 {
			d.PullRequest = pr.Number
		}
	}
}

// declaredBallot reads a declarative approval as a ballot: it approves the
// paused step of the release it names, once per step (the GitOps tool
// puts the value from Git back over what the gate writes, so a later step
// is approved again). A value naming another commit approves nothing and
// says so; steps already passed are left alone, since the value stays in
// Git.
func (o Observation) declaredBallot() (*ballot, *Rejection) {
	d, r := o.Declared, o.Rollout
	if d == nil || !r.InRelease || !r.Paused {
		return nil, nil
	}
	what := fmt.Sprintf("annotation %s %q", rolloutsv1beta1.ApproveAnnotation, d.Value)
	if d.Commit != "" {
		what += fmt.Sprintf(" set in commit %s by %s", short(d.Commit), d.Signer.Identity)
	}
	refuse := func(reason, msg string) *Rejection {
		return &Rejection{Reason: reason, Message: msg, By: d.Signer.Identity, Via: ViaGit, At: d.Signer.When, Commit: d.Commit, PullRequest: d.PullRequest}
	}
	switch {
	case d.Revision == "":
		return nil, refuse(ReasonOtherRevision, fmt.Sprintf("%s: names no revision, and a value kept in Git would approve every later release; approve it with revision=%s",
			what, short(o.Revision)))
	case !o.namesRevision(d.Revision):
		return nil, refuse(ReasonOtherRevision, fmt.Sprintf("%s: names commit %s, the release is of commit %s (%s); approve it with revision=%s",
			what, d.Revision, short(o.Revision), r.CanaryRevision, short(o.Revision)))
	case d.Commit == "":
		return nil, refuse(ReasonUnknownCommit, what+": "+d.NotFound)
	case d.Signer.Unverified != "":
		return nil, refuse(ReasonUnverifiedCommit, what+": "+d.Signer.Unverified)
	case !o.Policy.committerAllowed(d.Signer):
		return nil, refuse(ReasonNotAllowed, what+": "+d.Signer.Identity+" is not one of the allowed committers")
	case d.Step < r.Step:
		return nil, nil // passed; the value stays in Git
	}
	b := &ballot{action: ActionApprove, upTo: min(d.Step, r.Steps), by: d.Signer.Identity, identities: d.Signer.Identities, via: ViaGit,
		at: d.Signer.When, key: fmt.Sprintf("annotation:%s@%d", d.Commit, r.Step), commit: d.Commit, pr: d.PullRequest, what: what}
	if d.Step >= r.Steps {
		b.action = ActionPromoteFull
	}
	return b, nil
}

// declaredWhileAborted refuses a declarative approval of an aborted
// release, saying what to do.
func (o Observation) declaredWhileAborted() []Rejection {
	d := o.Declared
	if d == nil || !o.namesRevision(d.Revision) {
		return nil
	}
	return []Rejection{{Reason: ReasonRolledBack, Message: fmt.Sprintf("annotation %s %q: %s", rolloutsv1beta1.ApproveAnnotation, d.Value, o.abortedAdvice())}}
}
