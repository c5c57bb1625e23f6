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

// fromPresses finds the press to apply: a rollback first, then a promotion, then the
// approval of the step the release waits at.
func (o Observation) fromPresses() (*Intent, []Rejection) {
	var (
		best       *Intent
		rejections []Rejection
	)
	rank := map[Action]int{ActionApprove: 1, ActionPromoteFull: 2, ActionRollback: 3}
	for _, p := range o.Presses {
		in, rej := o.pressIntent(p)
		if rej != nil {
			rejections = append(rejections, *rej)
			continue
		}
		if in != nil && (best == nil || rank[in.Action] > rank[best.Action]) {
			best = in
		}
	}
	return best, rejections
}

// pressIntent is the intent of press p, or why it applies to nothing (both nil: it is not for
// this release, or not one of sluice's buttons). The presser is checked first, so that a
// press refused for who made it says so however the release moves on.
func (o Observation) pressIntent(p ButtonPress) (*Intent, *Rejection) {
	b, ok := prview.ParseButton(p.Identifier)
	r := o.Rollout
	if !ok || !r.InRelease || o.applied(pressKey(p.Press)) {
		return nil, nil
	}
	what := fmt.Sprintf("button %q of the check run on commit %s pressed by %s", buttonLabel(b), short(p.HeadSHA), p.By)
	refuse := func(reason, message string) (*Intent, *Rejection) {
		return nil, &Rejection{Reason: reason, Message: message}
	}
	in := &Intent{By: p.By, Via: ViaCheckRun, At: p.At, Key: pressKey(p.Press), PullRequest: o.PullRequest}
	switch b.Kind {
	case prview.ButtonRollback:
		in.Action = ActionRollback
	case prview.ButtonPromote:
		in.Action, in.Step = ActionPromoteFull, r.Steps
	default:
		in.Action, in.Step = ActionApprove, b.Step
	}
	l := Label{AppliedLabel: scm.AppliedLabel{Name: buttonLabel(b), AddedBy: p.By, AddedAt: p.At}, Permission: p.Permission, Teams: p.Teams,
		PullRequest: o.PullRequest}
	if reason, msg := o.Policy.refuseActor(l, what); reason != "" {
		return refuse(reason, msg)
	}
	if reason, msg := o.Policy.refuseSelfApproval(l, in.Action, o.Authors[o.PullRequest], what); reason != "" {
		return refuse(reason, msg)
	}
	switch {
	case in.Action == ActionApprove && b.Step < r.Step:
		return refuse(ReasonOlderStep, fmt.Sprintf("%s: step %d was approved already", what, b.Step))
	case in.Action == ActionApprove && (b.Step > r.Step || !r.Paused):
		return refuse(ReasonNotPaused, fmt.Sprintf("%s: step %d does not wait for an approval", what, b.Step))
	case !r.PausedAt.IsZero() && !p.At.After(r.PausedAt):
		return refuse(ReasonPressPredatesStep, fmt.Sprintf("%s: pressed at %s, before step %d/%d began at %s; press it again",
			what, p.At.UTC().Format(time.RFC3339), r.Step, r.Steps, r.PausedAt.UTC().Format(time.RFC3339)))
	}
	return in, nil
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
		out = append(out, Rejection{Reason: ReasonRolledBack, Message: fmt.Sprintf("button %q of the check run on commit %s pressed by %s: %s",
			buttonLabel(b), short(p.HeadSHA), p.By, o.abortedAdvice())})
	}
	return out
}
