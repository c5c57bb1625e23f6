package gitops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/revision"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/approval"
)

// maxArrivals bounds the commits after a revision that are read for
// trailers and reverts.
const maxArrivals = 50

// scope is what one reconcile of a GitGate works on.
type scope struct {
	gg       *gitopsv1alpha1.GitGate
	c        *clients
	head     string
	rollouts []rolloutsv1beta1.Rollout
	policy   Policy
	// retryAt is when GitHub allows requests again (zero: now).
	retryAt time.Time
	// perms caches permissions read in this reconcile.
	perms map[string]scm.Permission
	// teams caches, per user, the allowed teams they are a member of, read
	// in this reconcile.
	teams map[string][]string
}

// gather builds the clients, fetches the branch and lists the bound Rollouts.
func (r *Reconciler) gather(ctx context.Context, gg *gitopsv1alpha1.GitGate) (*scope, error) {
	c, err := r.clientsFor(ctx, gg)
	if err != nil {
		return nil, &configError{reason: "InvalidConfiguration", err: err}
	}
	sel, err := metav1.LabelSelectorAsSelector(&gg.Spec.RolloutSelector)
	if err != nil {
		return nil, &configError{reason: "InvalidSelector", err: err}
	}
	head, err := c.git.Fetch(ctx)
	if err != nil {
		if errors.Is(err, git.ErrAuthentication) || errors.Is(err, git.ErrInvalidOptions) || errors.Is(err, git.ErrHostKey) {
			return nil, &configError{reason: "GitAuthenticationFailed", err: err}
		}
		return nil, err
	}
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list, client.InNamespace(gg.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing rollouts: %w", err)
	}
	return &scope{gg: gg, c: c, head: head.SHA, rollouts: list.Items, policy: policyOf(gg), perms: map[string]scm.Permission{}, teams: map[string][]string{}}, nil
}

// reconcileRollout observes, decides and acts for one bound Rollout.
func (r *Reconciler) reconcileRollout(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout) gitopsv1alpha1.BoundRollout {
	log := ctrl.LoggerFrom(ctx).WithValues("rollout", client.ObjectKeyFromObject(ro))
	prev := previous(s.gg, ro.Name)
	out := gitopsv1alpha1.BoundRollout{Name: ro.Name}
	o, err := r.observe(ctx, s, ro, prev)
	out.Revision, out.PullRequest = o.Revision, o.PullRequest
	out.CanaryRevision, out.Step, out.Steps = o.Rollout.CanaryRevision, o.Rollout.Step, o.Rollout.Steps
	if prev.Revision == o.Revision {
		out.Approvals, out.Posted, out.Refused = prev.Approvals, prev.Posted, prev.Refused
	}
	if err != nil {
		out.Message = err.Error()
		log.Info("Cannot observe the rollout's revision", "reason", err.Error())
		return out
	}
	d := Decide(o)
	out.Message = d.Message
	for _, rej := range d.Rejections {
		r.emitOnce([]client.Object{s.gg, ro}, rej.Reason, rej.Message)
		out.Refused = refuse(out.Refused, rej)
	}
	if d.Apply != nil {
		if err := r.apply(ctx, s, ro, o, *d.Apply); err != nil {
			out.Message = "applying " + string(d.Apply.Action) + ": " + err.Error()
			log.Error(err, "Applying an intent", "action", d.Apply.Action)
		} else {
			out.Approvals = append(out.Approvals, gitopsv1alpha1.AppliedApproval{
				Action: string(d.Apply.Action), Step: d.Apply.Step, By: d.Apply.By, Via: d.Apply.Via,
				At: metav1.NewTime(d.Apply.At), Key: d.Apply.Key,
			})
			if len(out.Approvals) > 50 {
				out.Approvals = out.Approvals[len(out.Approvals)-50:]
			}
		}
	}
	if !s.gg.Spec.Status.Disabled {
		for _, p := range d.Posts {
			posted, err := r.post(ctx, s, p)
			if err != nil {
				log.Info("Commit status not posted", "sha", p.SHA, "reason", err.Error())
				continue
			}
			if posted != nil && p.SHA == o.Revision {
				out.Posted = posted
			}
		}
	}
	return out
}

// post posts a commit status unless GitHub asked to wait.
func (r *Reconciler) post(ctx context.Context, s *scope, p Post) (*gitopsv1alpha1.PostedStatus, error) {
	if r.Clock.Now().Before(s.retryAt) {
		return nil, fmt.Errorf("rate limited until %s", s.retryAt.UTC().Format(time.RFC3339))
	}
	if _, err := s.c.scm.SetStatus(ctx, p.SHA, p.Status); err != nil {
		s.noteSCM(err)
		return nil, err
	}
	st, _ := p.Status.Validate()
	return &gitopsv1alpha1.PostedStatus{SHA: p.SHA, Context: st.Context, State: string(st.State), Description: st.Description}, nil
}

// noteSCM remembers a rate limit.
func (s *scope) noteSCM(err error) {
	if at, ok := scm.RetryAt(err); ok && at.After(s.retryAt) {
		s.retryAt = at
	}
}

func previous(gg *gitopsv1alpha1.GitGate, name string) gitopsv1alpha1.BoundRollout {
	for _, b := range gg.Status.Rollouts {
		if b.Name == name {
			return b
		}
	}
	return gitopsv1alpha1.BoundRollout{}
}

// observe gathers what Decide needs for one Rollout.
func (r *Reconciler) observe(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, prev gitopsv1alpha1.BoundRollout) (Observation, error) {
	o := Observation{Rollout: viewOf(ro), Policy: s.policy}
	o.Context, o.TargetURL = statusNames(s.gg, ro, "")
	w, err := r.workload(ctx, ro)
	if err != nil {
		return o, err
	}
	spec := s.gg.Spec.Revision
	ann := spec.Annotation
	if ann == "" {
		ann = gitopsv1alpha1.DefaultRevisionAnnotation
	}
	rev, err := revision.Resolver{Reader: r.APIReader}.Of(ctx, w, revision.Options{Source: revision.Source(spec.From), Annotation: ann, ArgoCDNamespace: spec.ArgoCDNamespace})
	if err != nil {
		return o, err
	}
	o.Revision = rev.SHA
	// The GitOps tool reports the last commit it applied, which moves on
	// with every commit of the branch (trailer commits included) while the
	// release of the commit that changed the workload goes on: keep that one.
	if prev.Revision != "" && o.Rollout.InRelease && prev.CanaryRevision == o.Rollout.CanaryRevision {
		o.Revision = prev.Revision
	}
	o.Tracked = prev.Posted != nil && prev.Posted.SHA == o.Revision
	_, o.TargetURL = statusNames(s.gg, ro, o.Revision)
	if prev.Revision == o.Revision {
		for _, a := range prev.Approvals {
			o.Applied = append(o.Applied, Applied{Action: Action(a.Action), Step: a.Step, By: a.By, Via: a.Via, Key: a.Key})
		}
	}
	arrivals, err := s.c.git.CommitsSince(ctx, o.Revision)
	if err != nil {
		return o, fmt.Errorf("commit %s is not on branch %s: %w", short(o.Revision), branchOf(s.gg), err)
	}
	if len(arrivals) > maxArrivals {
		arrivals = arrivals[len(arrivals)-maxArrivals:]
	}
	r.observeCommits(ctx, s, ro, &o, arrivals)
	r.observePullRequest(ctx, s, &o)
	return o, nil
}

// observeCommits finds the trailers for ro and a revert of the revision
// among the commits that arrived after it.
func (r *Reconciler) observeCommits(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o *Observation, arrivals []git.Arrival) {
	for _, a := range arrivals {
		if o.RevertedBy == "" {
			if m, err := s.c.git.Reverts(ctx, a.SHA, o.Revision); err == nil && m.Reverts {
				o.RevertedBy = a.SHA
			}
		}
		if s.gg.Spec.Approval.DisableTrailers {
			continue
		}
		dirs, err := git.ParseDirectives(a.Message)
		if err != nil {
			r.emitOnce([]client.Object{s.gg}, "InvalidTrailer", fmt.Sprintf("commit %s: %v", short(a.SHA), err))
		}
		var mine []git.Directive
		for _, d := range dirs {
			if d.Namespace == ro.Namespace && d.Name == ro.Name {
				mine = append(mine, d)
			}
		}
		if len(mine) == 0 {
			continue
		}
		tc := TrailerCommit{SHA: a.SHA, Directives: mine, Identity: a.Author.Email, When: a.Committer.When}
		if s.c.keys != nil {
			signer, err := s.c.git.Verify(ctx, a.SHA, s.c.keys)
			switch {
			case err != nil:
				tc.Unverified = err.Error()
			case len(signer.Identities) > 0:
				for _, id := range signer.Identities {
					tc.Identities = append(tc.Identities, identityEmail(id))
				}
				tc.Identity = tc.Identities[0]
			default:
				tc.Identity = signer.Fingerprint
			}
		}
		o.Trailers = append(o.Trailers, tc)
	}
}

// observePullRequest finds the pull request of the revision, its sluice
// labels and their authors' permissions. SCM errors leave them out.
func (r *Reconciler) observePullRequest(ctx context.Context, s *scope, o *Observation) {
	log := ctrl.LoggerFrom(ctx)
	if r.Clock.Now().Before(s.retryAt) {
		return
	}
	prs, err := s.c.scm.PullRequestsForCommit(ctx, o.Revision)
	if err != nil {
		s.noteSCM(err)
		log.Info("Pull requests not read", "reason", err.Error())
		return
	}
	for _, pr := range prs {
		if pr.MergeCommitSHA == o.Revision || o.PullRequest == 0 {
			o.PullRequest = pr.Number
		}
	}
	if o.PullRequest == 0 {
		return
	}
	labels, err := s.c.scm.Labels(ctx, o.PullRequest)
	if err != nil {
		s.noteSCM(err)
		log.Info("Labels not read", "reason", err.Error())
		return
	}
	p := s.policy
	for _, l := range labels {
		if !containsFold([]string{p.ApproveLabel, p.PromoteFullLabel, p.RollbackLabel}, l.Name) {
			continue
		}
		lb := Label{AppliedLabel: l, Permission: scm.PermissionNone}
		if l.AddedBy != "" {
			perm, ok := s.perms[l.AddedBy]
			if !ok {
				perm, err = s.c.scm.Permission(ctx, l.AddedBy)
				if err != nil && !scm.IsNotFound(err) {
					s.noteSCM(err)
					log.Info("Permission not read", "user", l.AddedBy, "reason", err.Error())
					continue
				}
				if err != nil {
					perm = scm.PermissionNone
				}
				s.perms[l.AddedBy] = perm
			}
			lb.Permission = perm
			if perm.AtLeast(p.MinPermission) {
				teams, err := r.teamsOf(ctx, s, l.AddedBy)
				if err != nil {
					s.noteSCM(err)
					log.Info("Team membership not read", "user", l.AddedBy, "reason", err.Error())
					continue
				}
				lb.Teams = teams
			}
		}
		o.Labels = append(o.Labels, lb)
	}
}

// teamsOf returns the allowed teams user is an active member of. It asks
// only when the policy lists allowed teams and user is not already one of
// the allowed users, and only until a team admits them.
func (r *Reconciler) teamsOf(ctx context.Context, s *scope, user string) ([]string, error) {
	p := s.policy
	if len(p.AllowedTeams) == 0 || containsFold(p.AllowedUsers, user) {
		return nil, nil
	}
	if teams, ok := s.teams[user]; ok {
		return teams, nil
	}
	var teams []string
	for _, team := range p.AllowedTeams {
		org, slug, ok := strings.Cut(team, "/")
		if !ok {
			continue
		}
		member, err := s.c.scm.TeamMember(ctx, org, slug, user)
		if err != nil {
			return nil, err
		}
		if member {
			teams = append(teams, team)
			break
		}
	}
	s.teams[user] = teams
	return teams, nil
}

// workload reads ro's workload.
func (r *Reconciler) workload(ctx context.Context, ro *rolloutsv1beta1.Rollout) (*unstructured.Unstructured, error) {
	ref := ro.Spec.WorkloadRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}, w); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	return w, nil
}

// apply carries out an intent.
func (r *Reconciler) apply(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o Observation, in Intent) error {
	switch in.Action {
	case ActionRollback:
		if err := r.rollback(ctx, ro, o.Rollout.StableRevision); err != nil {
			return err
		}
		r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, "RolledBack", "Rollback",
			"Revision %s rolled back to the stable revision %s by %s via %s", short(o.Revision), o.Rollout.StableRevision, in.By, in.Via)
		if in.Via == ViaLabel && s.gg.Spec.GitHub.ProposeRevert {
			r.proposeRevert(ctx, s, ro, o.Revision)
		}
		return nil
	case ActionApprove, ActionPromoteFull:
	}
	at := in.At.UTC()
	a := approval.Approval{Revision: o.Rollout.CanaryRevision, Step: in.Step, By: in.By, Via: in.Via, At: &at}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		rolloutsv1beta1.ApproveAnnotation: approval.Encode(a)}}})
	if err := r.Client.Patch(ctx, ro.DeepCopy(), client.RawPatch(types.MergePatchType, b), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("writing the approval: %w", err)
	}
	r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, "GitApproval", "Approve",
		"Step %d of revision %s (commit %s) approved by %s via %s", in.Step, a.Revision, short(o.Revision), in.By, in.Via)
	return nil
}

// viewOf reads the release of ro.
func viewOf(ro *rolloutsv1beta1.Rollout) RolloutView {
	v := RolloutView{Namespace: ro.Namespace, Name: ro.Name, Steps: int32(len(ro.Spec.Strategy.Steps()))} //nolint:gosec // at most 50
	var common *rolloutsv1beta1.CommonStatus
	switch st := ro.Status; {
	case st.BlueGreenStatus != nil:
		common, v.CanaryRevision = &st.BlueGreenStatus.CommonStatus, st.BlueGreenStatus.UpdatedRevision
	case st.CanaryStatus != nil:
		common, v.CanaryRevision = &st.CanaryStatus.CommonStatus, st.CanaryStatus.CanaryRevision
	}
	v.Healthy = ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	if common == nil {
		return v
	}
	v.Step, v.StableRevision = common.CurrentStepIndex, common.StableRevision
	v.InRelease = ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted
	v.Paused = common.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	if common.LastUpdateTime != nil {
		v.PausedAt = common.LastUpdateTime.Time
	}
	return v
}

// policyOf reads the approval policy with its defaults.
func policyOf(gg *gitopsv1alpha1.GitGate) Policy {
	a := gg.Spec.Approval
	p := Policy{ApproveLabel: a.Labels.Approve, PromoteFullLabel: a.Labels.PromoteFull, RollbackLabel: a.Labels.Rollback,
		AllowedUsers: a.AllowedUsers, AllowedCommitters: a.AllowedCommitters, AllowedTeams: a.AllowedTeams}
	if p.ApproveLabel == "" {
		p.ApproveLabel = "sluice/approve"
	}
	if p.PromoteFullLabel == "" {
		p.PromoteFullLabel = "sluice/promote-full"
	}
	if p.RollbackLabel == "" {
		p.RollbackLabel = "sluice/rollback"
	}
	p.MinPermission = scm.PermissionWrite
	if perm, err := scm.ParsePermission(a.MinPermission); err == nil && a.MinPermission != "" {
		p.MinPermission = perm
	}
	return p
}

// statusNames returns the context and target URL of ro's commit status.
func statusNames(gg *gitopsv1alpha1.GitGate, ro *rolloutsv1beta1.Rollout, sha string) (contextName, targetURL string) {
	repl := strings.NewReplacer("${namespace}", ro.Namespace, "${rollout}", ro.Name, "${revision}", sha)
	contextName = "sluice/${namespace}/${rollout}"
	if gg.Spec.Status.Context != "" {
		contextName = gg.Spec.Status.Context
	}
	return repl.Replace(contextName), repl.Replace(gg.Spec.Status.TargetURL)
}

// proposeRevert opens a pull request reverting the commit rolled back, so
// that Git converges on the stable revision. Failing to is reported, never
// fatal: the rollback is done.
func (r *Reconciler) proposeRevert(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, sha string) {
	p, err := s.c.scm.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: sha, Base: branchOf(s.gg)})
	if err != nil {
		s.noteSCM(err)
		r.Recorder.Eventf(s.gg, ro, corev1.EventTypeWarning, "RevertNotProposed", "ProposeRevert",
			"Could not open a pull request reverting %s: %v; revert it in Git, or the GitOps tool will apply it again", short(sha), err)
		return
	}
	r.Recorder.Eventf(s.gg, ro, corev1.EventTypeNormal, "RevertProposed", "ProposeRevert",
		"Pull request #%d reverts %s: %s", p.Number, short(sha), p.URL)
}

// identityEmail is the e-mail address of an OpenPGP user ID ("Jane
// <jane@example.com>"), or the identity itself.
func identityEmail(id string) string {
	if i, j := strings.LastIndex(id, "<"), strings.LastIndex(id, ">"); i >= 0 && j > i {
		return id[i+1 : j]
	}
	return id
}

// refuse adds a refusal to the list kept in status, once, keeping the 10
// newest.
func refuse(list []gitopsv1alpha1.RefusedIntent, rej Rejection) []gitopsv1alpha1.RefusedIntent {
	for _, r := range list {
		if r.Reason == rej.Reason && r.Message == rej.Message {
			return list
		}
	}
	list = append(list, gitopsv1alpha1.RefusedIntent{Reason: rej.Reason, Message: rej.Message})
	if len(list) > 10 {
		list = list[len(list)-10:]
	}
	return list
}
