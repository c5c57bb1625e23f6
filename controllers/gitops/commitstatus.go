package gitops

import (
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/canary"
)

// statuses computes the commit statuses for the revision (and the revert
// commit), and the message; q is where the approval of the step the
// release waits at stands.
func (o Observation) statuses(apply *Intent, q *Quorum) ([]Post, string) {
	if o.Revision == "" {
		return nil, "no revision found"
	}
	r := o.Rollout
	st := scm.CommitStatus{Context: o.Context, TargetURL: o.TargetURL}
	rolledBack := o.rolledBack()
	aborting := apply != nil && apply.Action == ActionRollback
	// A rejection (the reject label) is a rollback that says so.
	aborted, rolled := "aborted", "rolled back"
	if aborting && apply.Rejected || !aborting && rolledBack != nil && rolledBack.Rejected {
		aborted, rolled = "rejected", "rejected"
	}
	// Reverted: the revert synced (the workload is back on stable) before
	// the gate saw it and aborted the release.
	reverted := o.RevertedBy != "" && rolledBack == nil && r.Aborted == nil && !aborting && !r.InRelease && o.LastPosted == scm.StatePending
	var posts []Post
	switch {
	case apply != nil && apply.Action == ActionRetry:
		st.State, st.Description = scm.StatePending, "retried by "+apply.By+": releasing again from step 1"
	case r.Aborted != nil && r.Aborted.Via == canary.ViaAnalysis:
		st.State, st.Description = scm.StateFailure, fmt.Sprintf("aborted at step %d: %s", r.Aborted.Step, r.Aborted.Reason)
	case r.Aborted != nil:
		st.State, st.Description = scm.StateFailure, fmt.Sprintf("%s at step %d/%d by %s", aborted, r.Aborted.Step, r.Steps, shortBy(r.Aborted.By, r.Aborted.Via))
	case aborting:
		st.State, st.Description = scm.StateFailure, fmt.Sprintf("%s at step %d/%d by %s", aborted, r.Step, r.Steps, shortBy(apply.By, apply.Via))
	case rolledBack != nil && !r.Healthy:
		// Asked for; the Rollout has not caught up yet.
		st.State, st.Description = scm.StateFailure, fmt.Sprintf("%s at step %d/%d by %s", aborted, r.Step, r.Steps, shortBy(rolledBack.By, rolledBack.Via))
	case rolledBack != nil:
		st.State, st.Description = scm.StateFailure, rolled+" by "+shortBy(rolledBack.By, rolledBack.Via)
	case reverted:
		st.State, st.Description = scm.StateFailure, "rolled back by "+short(o.RevertedBy)
	case r.Healthy && !o.Tracked:
		return posts, "no release in progress"
	case r.Healthy:
		st.State, st.Description = scm.StateSuccess, "released"
		if r.Steps > 0 {
			st.Description = fmt.Sprintf("released: %d/%d steps done", r.Steps, r.Steps)
		}
	case r.InRelease && r.Analysis != "" && (r.AnalysisRunning || !r.Paused):
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d: %s", r.Step, r.Steps, r.Analysis)
	case r.InRelease && r.Paused && r.Analysis != "" && o.approvedBy(apply) == "":
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d: %s; %s", r.Step, r.Steps, r.Analysis, o.waiting(q, "to continue"))
	case r.InRelease && r.Paused && o.approvedBy(apply) != "":
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d approved by %s", r.Step, r.Steps, o.approvedBy(apply))
	case r.InRelease && r.Paused:
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d paused: %s", r.Step, r.Steps, o.waiting(q, "to continue"))
	case r.InRelease:
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d in progress", r.Step, r.Steps)
	default:
		st.State, st.Description = scm.StatePending, "release finishing"
	}
	if o.RevertedBy != "" && (r.Aborted != nil || aborting || rolledBack != nil || reverted) {
		// The revert commit reports the rollback it brings: done once it
		// synced and the workload is handed back.
		rb := scm.CommitStatus{Context: o.Context, TargetURL: o.TargetURL, State: scm.StatePending, Description: "rolling back " + short(o.Revision) + " to the stable revision"}
		if r.Healthy {
			rb.State, rb.Description = scm.StateSuccess, "rolled back "+short(o.Revision)+": stable revision restored"
		}
		posts = append(posts, Post{SHA: o.RevertedBy, Status: rb})
	}
	var release []Post
	for _, sha := range o.releaseSHAs() {
		release = append(release, Post{SHA: sha, Status: st})
	}
	return append(release, posts...), st.Description
}

// shortBy names who acted for a status: a commit SHA (a revert) shortened.
func shortBy(by, via string) string {
	if via == ViaRevert {
		return short(by)
	}
	return by
}

// short is commitid.Short, the one short form of a commit id, named short for this
// package's many messages.
var short = commitid.Short

// approvedBy names who approved the current step, by the intent being
// applied or one applied before that the Rollout has not acted on yet; ""
// when nobody did.
func (o Observation) approvedBy(apply *Intent) string {
	if apply != nil && (apply.Action == ActionApprove || apply.Action == ActionPromoteFull) && apply.Step >= o.Rollout.Step {
		return apply.By
	}
	for i := len(o.Applied) - 1; i >= 0; i-- {
		if a := o.Applied[i]; (a.Action == ActionApprove || a.Action == ActionPromoteFull) && a.Step >= o.Rollout.Step {
			return a.By
		}
	}
	return ""
}

// waiting says what the step the release waits at needs: with the default
// policy (one approval, no required approvers) and none given yet, what to
// do (add the approve label, then why); else how many of the approvals
// needed are given, by whom, and what is still missing: "1 of 2 approvals
// (alice); waiting for 1 more".
func (o Observation) waiting(q *Quorum, why string) string {
	if q == nil || len(q.Approvers) == 0 && q.Needed <= 1 && len(q.Waiting) <= 1 && len(o.Policy.requiredFor(q.Step, q.Step)) == 0 {
		return fmt.Sprintf("add label %s %s", o.Policy.ApproveLabel, why)
	}
	names := make([]string, 0, len(q.Approvers))
	for _, a := range q.Approvers {
		names = append(names, a.By)
	}
	msg := fmt.Sprintf("%d of %d approval%s", len(q.Approvers), q.Needed, plural(q.Needed))
	if len(names) > 0 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	if len(q.Waiting) > 0 {
		msg += "; waiting for " + strings.Join(q.Waiting, " and ")
	}
	return msg
}
