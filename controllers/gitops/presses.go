package gitops

import (
	"context"
	"fmt"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/prview"
	"github.com/sluice-dev/sluice/gitops/receiver"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// Button presses on sluice's check runs as intents: the receiver records each press on the
// GitGate (receiver.PressesAnnotation, signed with the gate's webhook secret; see
// RecordPress), and the leader reads the verified ones here and applies them through the
// approval policy as a label is applied: the presser's permission, the allowed users and
// teams, and the separation of duties.

// ViaCheckRun is how a press of a check run's button is recorded.
const ViaCheckRun = "github-check-run"

// ReasonPressPredatesStep is the reason of a press refused because the button was pressed
// before the release reached the state it is in (a press of an earlier pause, or of a release
// since retried).
const ReasonPressPredatesStep = "PressPredatesStep"

// ReasonPressNotVerified is the reason of a press recorded on the GitGate that does not verify
// with its webhook secret (edited by hand, or recorded before the secret was rotated).
const ReasonPressNotVerified = "PressNotVerified"

// ButtonPress is a verified press of a button of the Rollout's check run, with what the
// policy needs of the presser.
type ButtonPress struct {
	receiver.Press
	// Permission of the presser on the repository.
	Permission scm.Permission
	// Teams are the allowed teams the presser is an active member of; read only when the
	// policy lists allowed teams.
	Teams []string
}

// verifiedPresses reads the presses recorded on gg that verify with its webhook secret; the
// others raise an event, once.
func (r *Reconciler) verifiedPresses(ctx context.Context, gg *gitopsv1alpha1.GitGate) []receiver.Press {
	raw := gg.GetAnnotations()[receiver.PressesAnnotation]
	if raw == "" {
		return nil
	}
	list, err := receiver.DecodePresses(raw)
	if err != nil {
		r.emitOnce([]client.Object{gg}, ReasonPressNotVerified, err.Error())
		return nil
	}
	var secret []byte
	if secrets := r.webhookSecretsOf(ctx, []gitopsv1alpha1.GitGate{*gg}, false, false); len(secrets) > 0 {
		secret = secrets[0].Value
	}
	var out []receiver.Press
	for _, sp := range list {
		p, err := sp.Verify(secret)
		if err != nil {
			r.emitOnce([]client.Object{gg}, ReasonPressNotVerified, err.Error()+"; the press counts for nothing")
			continue
		}
		out = append(out, p)
	}
	return out
}

// observePresses gathers the verified presses for ro, with their pressers' permissions and
// teams. SCM errors leave a press out (it is read again next time).
func (r *Reconciler) observePresses(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o *Observation) {
	if _, limited := s.rateLimited(r.Clock.Now()); s.c.scm == nil || limited {
		return
	}
	name := ro.Namespace + "/" + ro.Name
	for _, p := range r.verifiedPresses(ctx, s.gg) {
		if p.Rollout != name || !slices.Contains(o.releaseSHAs(), p.HeadSHA) || o.applied(pressKey(p)) {
			continue // another Rollout's, another release's, or applied
		}
		// Asked once per user and reconcile (the memo).
		perm, err := s.c.scm.Permission(ctx, p.By)
		if err != nil && !scm.IsNotFound(err) {
			s.noteSCM(err)
			ctrl.LoggerFrom(ctx).Info("Permission not read", "user", p.By, "reason", err.Error())
			continue
		}
		if err != nil {
			perm = scm.PermissionNone
		}
		bp := ButtonPress{Press: p, Permission: perm}
		teams, err := r.teamsOf(ctx, s, p.By, s.policy.TeamsToAsk(p.By, perm))
		if err != nil {
			s.noteSCM(err)
			ctrl.LoggerFrom(ctx).Info("Team membership not read", "user", p.By, "reason", err.Error())
			continue
		}
		bp.Teams = teams
		o.Presses = append(o.Presses, bp)
	}
}

// pressKey identifies a press among the applied intents: its delivery.
func pressKey(p receiver.Press) string { return "press:" + p.Delivery }

// buttonLabel is a button's text, as the check run shows it.
func buttonLabel(b prview.Button) string {
	switch b.Kind {
	case prview.ButtonPromote:
		return "Promote"
	case prview.ButtonRollback:
		return "Roll back"
	}
	return fmt.Sprintf("Approve step %d", b.Step)
}

// pressOf reads a press of one of sluice's buttons for this release: the button, and what
// names the press in messages; ok is false for a press of another release, one already
// applied, or not of one of sluice's buttons.
func (o Observation) pressOf(p ButtonPress) (prview.Button, string, bool) {
	b, ok := prview.ParseButton(p.Identifier)
	if !ok || !o.Rollout.InRelease || o.applied(pressKey(p.Press)) {
		return b, "", false
	}
	return b, fmt.Sprintf("button %q of the check run on commit %s pressed by %s", buttonLabel(b), short(p.HeadSHA), p.By), true
}

// pressStop finds a press of "Roll back" to apply: a stop, anyone's with the permission, as
// the rollback label and "/sluice rollback" are, pressed since the release started.
func (o Observation) pressStop() (*Intent, []Rejection) {
	var rejections []Rejection
	r := o.Rollout
	for _, p := range o.Presses {
		b, what, ok := o.pressOf(p)
		if !ok || b.Kind != prview.ButtonRollback {
			continue
		}
		refuse := Rejection{By: p.By, Via: ViaCheckRun, At: p.At, PullRequest: o.PullRequest, Commit: p.HeadSHA}
		if reason, msg := o.Policy.refuseActor(p.actor(), what); reason != "" {
			refuse.Reason, refuse.Message = reason, msg
			rejections = append(rejections, refuse)
			continue
		}
		if !r.StartedAt.IsZero() && p.At.Before(r.StartedAt) {
			refuse.Reason = ReasonPressPredatesStep
			refuse.Message = fmt.Sprintf("%s: pressed at %s, before the release started at %s; press it again",
				what, p.At.UTC().Format(time.RFC3339), r.StartedAt.UTC().Format(time.RFC3339))
			rejections = append(rejections, refuse)
			continue
		}
		return &Intent{Action: ActionRollback, By: p.By, Via: ViaCheckRun, At: p.At, Key: pressKey(p.Press), PullRequest: o.PullRequest}, rejections
	}
	return nil, rejections
}

// pressBallots reads the presses of "Approve step N" and "Promote" as ballots: each counts as
// its presser's approval under the same policy as a label, a comment or a review (permission,
// allowed users and teams, separation of duties, the quorum, required approvers, expiry), once
// pressed after the step began.
func (o Observation) pressBallots() ([]ballot, []Rejection) {
	var (
		out  []ballot
		rejs []Rejection
	)
	r := o.Rollout
	for _, p := range o.Presses {
		btn, what, ok := o.pressOf(p)
		if !ok || btn.Kind == prview.ButtonRollback {
			continue
		}
		b := ballot{by: p.By, host: true, via: ViaCheckRun, at: p.At, key: pressKey(p.Press), pr: o.PullRequest, what: what,
			action: ActionApprove, upTo: r.Step}
		if btn.Kind == prview.ButtonPromote {
			b.action, b.upTo = ActionPromoteFull, r.Steps
		} else if r.Paused && btn.Step != r.Step {
			reason, msg := ReasonNotPaused, fmt.Sprintf("%s: step %d does not wait for an approval", what, btn.Step)
			if btn.Step < r.Step {
				reason, msg = ReasonOlderStep, fmt.Sprintf("%s: step %d was approved already", what, btn.Step)
			}
			rejs = append(rejs, b.refusal(reason, msg))
			continue
		}
		if got, rej, ok := o.hostBallot(b, p.actor(), ReasonPressPredatesStep); rej != nil {
			rejs = append(rejs, *rej)
		} else if ok {
			out = append(out, got)
		}
	}
	return out, rejs
}

// actor is who pressed, for the policy.
func (p ButtonPress) actor() Actor {
	return Actor{Login: p.By, Permission: p.Permission, Teams: p.Teams}
}

// pressesWhileAborted refuses the presses made since the release was aborted: only a retry
// (the retry label), the revert syncing or a new commit moves it.
func (o Observation) pressesWhileAborted() []Rejection {
	var out []Rejection
	for _, p := range o.Presses {
		b, ok := prview.ParseButton(p.Identifier)
		if !ok || o.applied(pressKey(p.Press)) || o.Rollout.Aborted == nil || !p.At.After(o.Rollout.Aborted.At) {
			continue
		}
		out = append(out, Rejection{Reason: ReasonRolledBack, By: p.By, Via: ViaCheckRun, At: p.At, PullRequest: o.PullRequest,
			Message: fmt.Sprintf("button %q of the check run on commit %s pressed by %s: %s", buttonLabel(b), short(p.HeadSHA), p.By, o.abortedAdvice())})
	}
	return out
}
