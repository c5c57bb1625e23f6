package gitops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/meta"
	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/appliedcommit"
	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
)

// maxArrivals bounds the commits after a revision that are read for
// trailers and reverts.
const maxArrivals = 50

// scope is what one reconcile of a GitGate works on.
type scope struct {
	gg *gitopsv1alpha1.GitGate
	// base is gg as read, for the status patch.
	base *gitopsv1alpha1.GitGate
	// interval is how often the gate is read.
	interval time.Duration
	// halted: a phase ended the reconcile with nothing left to do (the
	// gate is suspended).
	halted   bool
	c        *clients
	head     string
	rollouts []rolloutsv1beta1.Rollout
	policy   Policy
	// host is the SCM host the gate names ("" for none).
	host scm.Host
	// mu guards the fields below: the bound Rollouts are reconciled
	// concurrently (reconcileRollouts), and each may note them. Read and
	// write them through the scope's methods (scopestate.go).
	mu sync.Mutex
	// retryAt is when GitHub allows requests again (zero: now).
	retryAt time.Time
	// teams caches, per user, the allowed teams they are a member of, read
	// in this reconcile.
	teams map[string][]string
	// members caches, per user and team of the required approver sets,
	// whether they are an active member, read in this reconcile.
	members map[string]bool
	// applying: a Rollout's GitOps tool was applying a revision, so the
	// gate looks again soon.
	applying bool
	// wakeAt is the earliest time a decision changes by time alone.
	wakeAt time.Time
	// replicas are the pods each Rollout's workload asks for, by Rollout
	// name (noteReplicas, surface.go).
	replicas map[string]int32
	// requestedAt is the gate's reconcile.fluxcd.io/requestedAt as this
	// reconcile read it, and checkedAt when the cache was last looked at
	// for a newer one (superseded, hints.go).
	requestedAt string
	checkedAt   time.Time
	// hints is how many hints this replica had handed its controller for
	// the gate when the reconcile started (hintCount).
	hints uint64
}

// applyingRequeue is how soon a gate looks again when a GitOps tool was in
// the middle of applying a revision.
const applyingRequeue = 2 * time.Second

// newScope starts the scope of a reconcile of gg.
func newScope(gg *gitopsv1alpha1.GitGate) *scope {
	interval := gg.Spec.Interval.Duration
	if interval <= 0 {
		interval = DefaultInterval
	}
	host, _ := scmOf(gg)
	s := &scope{gg: gg, base: gg.DeepCopy(), interval: interval, policy: policyOf(gg), host: host,
		teams: map[string][]string{}, members: map[string]bool{}, replicas: map[string]int32{}}
	// After the copy: handling the request is news for the status.
	if v, ok := meta.ReconcileAnnotationValue(gg.GetAnnotations()); ok {
		gg.Status.LastHandledReconcileAt = v
		s.requestedAt = v
	}
	return s
}

// reconcileSuspend halts a suspended gate.
func (r *Reconciler) reconcileSuspend(_ context.Context, s *scope) (ctrl.Result, error) {
	s.halted = s.gg.Spec.Suspend
	return ctrl.Result{}, nil
}

// reconcileSource builds the clients, fetches the branch and lists the
// bound Rollouts.
func (r *Reconciler) reconcileSource(ctx context.Context, s *scope) (ctrl.Result, error) {
	gg := s.gg
	c, err := r.clientsFor(ctx, gg)
	if err != nil {
		return ctrl.Result{}, &configError{reason: "InvalidConfiguration", err: err}
	}
	sel, err := metav1.LabelSelectorAsSelector(&gg.Spec.RolloutSelector)
	if err != nil {
		return ctrl.Result{}, &configError{reason: "InvalidSelector", err: err}
	}
	head, err := c.git.Fetch(ctx)
	if err != nil {
		if errors.Is(err, git.ErrAuthentication) || errors.Is(err, git.ErrInvalidOptions) || errors.Is(err, git.ErrHostKey) {
			return ctrl.Result{}, &configError{reason: "GitAuthenticationFailed", err: err}
		}
		return ctrl.Result{}, &phaseError{reason: "GitFetchFailed", err: err}
	}
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list, client.InNamespace(gg.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return ctrl.Result{}, &phaseError{reason: "RolloutListFailed", err: fmt.Errorf("listing rollouts: %w", err)}
	}
	s.c, s.head, s.rollouts = forOneReconcile(c), head.SHA, list.Items
	return ctrl.Result{}, nil
}

// reconcileRollouts acts on every bound Rollout and records what it did in
// the status; it asks to look again soon while a GitOps tool is applying,
// and after GitHub's rate limit ends.
func (r *Reconciler) reconcileRollouts(ctx context.Context, s *scope) (ctrl.Result, error) {
	results := make([]gitopsv1alpha1.BoundRollout, len(s.rollouts))
	posts := make([][]Post, len(s.rollouts))
	// The bound Rollouts are independent: observed, decided and acted on
	// side by side, so that an approval never waits for the API and SCM
	// round trips of every Rollout listed before it. Git reads are
	// serialised by the reader and SCM answers shared through the
	// reconcile's memo (memo.go).
	var wg sync.WaitGroup
	slots := make(chan struct{}, rolloutWorkers)
	for i := range s.rollouts {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[i], posts[i] = r.reconcileRollout(ctx, s, &s.rollouts[i])
		}()
	}
	wg.Wait()
	// Statuses only once every Rollout's approval is applied: an approval
	// never waits for the status posts of the Rollouts before it. Each
	// Rollout's commit statuses, then its pull request's comment and check
	// run, which show the statuses decided. A newer hint (a delivery)
	// leaves the Rollouts not posted yet to the next reconcile, which
	// starts at once and decides their posts again: nothing is lost, since
	// what was posted is recorded per Rollout.
	for i := range results {
		if !r.postStatuses(ctx, s, &results[i], posts[i]) || r.superseded(ctx, s) {
			ctrl.LoggerFrom(ctx).V(1).Info("A newer hint arrived: leaving the remaining posts to the next reconcile", "rollout", results[i].Name)
			break
		}
		r.postSurface(ctx, s, &s.rollouts[i], &results[i], posts[i])
	}
	gg := s.gg
	gg.Status.Rollouts = results
	gg.Status.BoundRollouts = int32(len(results)) //nolint:gosec // bounded by the list
	gg.Status.Head = s.head
	after := s.interval
	if s.applying && applyingRequeue < after {
		after = applyingRequeue
	}
	for _, at := range []time.Time{s.retryAt, s.wakeAt} { // the workers are done: no lock needed
		if at.IsZero() {
			continue
		}
		if d := at.Sub(r.Clock.Now()) + time.Second; d > 0 && d < after {
			after = d
		}
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// readyMessage is the Ready condition's message after a successful
// reconcile.
func (s *scope) readyMessage() string {
	msg := fmt.Sprintf("%d rollout(s) bound at %s", len(s.gg.Status.Rollouts), short(s.head))
	if !s.retryAt.IsZero() {
		msg += "; GitHub asks to wait until " + s.retryAt.UTC().Format(time.RFC3339)
	}
	return msg
}

// reconcileRollout observes, decides and acts for one bound Rollout, and
// returns what the gate records of it and the commit statuses to post.
func (r *Reconciler) reconcileRollout(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout) (gitopsv1alpha1.BoundRollout, []Post) {
	log := ctrl.LoggerFrom(ctx).WithValues("rollout", client.ObjectKeyFromObject(ro))
	prev := previous(s.gg, ro.Name)
	out := gitopsv1alpha1.BoundRollout{Name: ro.Name}
	o, err := r.observe(ctx, s, ro, prev)
	if errors.Is(err, appliedcommit.ErrApplying) {
		// Which commit the workload shows is known once the tool records
		// it: keep everything as it was until then.
		s.noteApplying()
		prev.Name, prev.Message = ro.Name, err.Error()
		return prev, nil
	}
	out.Revision, out.PullRequest, out.Commits = o.Revision, o.PullRequest, o.Commits
	out.CanaryRevision, out.Step, out.Steps = o.Rollout.CanaryRevision, o.Rollout.Step, o.Rollout.Steps
	out.StableRevision = o.Rollout.StableRevision
	if prev.Revision == o.Revision {
		out.Approvals, out.Posted, out.Refused = prev.Approvals, prev.Posted, prev.Refused
		if !o.Rollout.InRelease && prev.StableRevision != "" {
			out.StableRevision = prev.StableRevision // the one the release replaced
		}
	}
	if err != nil {
		out.Message = err.Error()
		log.Info("Cannot observe the rollout's revision", "reason", err.Error())
		return out, nil
	}
	d := Decide(o)
	out.Message = d.Message
	out.Quorum = quorumStatus(d.Quorum)
	s.noteWake(d.WakeAt)
	for _, rej := range d.Rejections {
		r.emitOnce([]client.Object{s.gg, ro}, rej.Reason, rej.Message)
		out.Refused = refuse(out.Refused, rej)
	}
	if d.Apply != nil {
		if err := r.apply(ctx, s, ro, o, *d.Apply); err != nil {
			out.Message = "applying " + string(d.Apply.Action) + ": " + err.Error()
			log.Error(err, "Applying an intent", "action", d.Apply.Action)
		} else {
			at := d.Apply.At
			if at.IsZero() {
				at = r.Clock.Now() // a revert says nothing of when: record when it was seen
			}
			out.Approvals = append(out.Approvals, gitopsv1alpha1.AppliedApproval{
				Action: string(d.Apply.Action), Step: d.Apply.Step, By: d.Apply.By, Via: d.Apply.Via,
				At: metav1.NewTime(at), Key: d.Apply.Key, Rejected: d.Apply.Rejected,
				Commit: d.Apply.Commit, PullRequest: d.Apply.PullRequest, Approvers: givenApprovals(d.Apply.Approvers),
			})
			if len(out.Approvals) > 50 {
				out.Approvals = out.Approvals[len(out.Approvals)-50:]
			}
		}
	}
	return out, d.Posts
}

// postStatuses posts a Rollout's commit statuses and records the one on its
// revision in out. It stops, reporting false, when a newer hint arrived
// (superseded): the next reconcile decides the posts left again, and the
// SCM client skips those already made.
func (r *Reconciler) postStatuses(ctx context.Context, s *scope, out *gitopsv1alpha1.BoundRollout, posts []Post) bool {
	if s.gg.Spec.Status.Disabled || s.c.scm == nil {
		return true
	}
	for _, p := range posts {
		if r.superseded(ctx, s) {
			return false
		}
		posted, err := r.post(ctx, s, p)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Commit status not posted", "rollout", out.Name, "sha", p.SHA, "reason", err.Error())
			continue
		}
		if posted != nil && p.SHA == out.Revision {
			out.Posted = posted
		}
	}
	return true
}

// post posts a commit status unless GitHub asked to wait.
func (r *Reconciler) post(ctx context.Context, s *scope, p Post) (*gitopsv1alpha1.PostedStatus, error) {
	if until, limited := s.rateLimited(r.Clock.Now()); limited {
		return nil, fmt.Errorf("rate limited until %s", until.UTC().Format(time.RFC3339))
	}
	if _, err := s.c.scm.SetStatus(ctx, p.SHA, p.Status); err != nil {
		s.noteSCM(err)
		return nil, err
	}
	st, _ := p.Status.Validate()
	return &gitopsv1alpha1.PostedStatus{SHA: p.SHA, Context: st.Context, State: string(st.State), Description: st.Description}, nil
}

// apply carries out an intent: an approval is written into
// sluice.dev/approve, a rollback into sluice.dev/abort (the release is held
// on the stable revision; the pod template stays as Git has it), a retry
// into sluice.dev/retry. sluice's admission webhook records the person the
// JSON value names, since the gate writes as sluice's own identity.
func (r *Reconciler) apply(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o Observation, in Intent) error {
	at := in.At.UTC()
	if in.At.IsZero() {
		at = r.Clock.Now().UTC()
	}
	var key string
	var patch map[string]any
	switch in.Action {
	case ActionRollback:
		reason := "revert " + short(in.Commit)
		switch {
		case in.Rejected:
			reason = fmt.Sprintf("rejected: %s by %s on pull request #%d", stopSource(in, s.policy), in.By, in.PullRequest)
		case onPullRequest(in.Via):
			reason = fmt.Sprintf("%s on pull request #%d", stopSource(in, s.policy), in.PullRequest)
		case in.Via == ViaTrailer:
			reason = "trailer in commit " + short(in.Commit)
		case in.Via == ViaCheckRun:
			reason = fmt.Sprintf("button Roll back of check run %s pressed by %s", o.Context, in.By)
		case in.Via == ViaStepTimeout:
			reason = fmt.Sprintf("step %d/%d waited longer than %s for an approval", o.Rollout.Step, o.Rollout.Steps, s.policy.StepTimeout)
		}
		req := abort.Request{Revision: o.Rollout.CanaryRevision, By: in.By, Via: in.Via, At: &at, Reason: reason, Commit: in.Commit}
		if onPullRequest(in.Via) {
			req.PullRequest = int32(in.PullRequest) //nolint:gosec // pull request numbers fit
		}
		key = rolloutsv1beta1.AbortAnnotation
		patch = abort.Patch(key, req)
	case ActionRetry:
		req := abort.Request{Revision: o.Rollout.CanaryRevision, By: in.By, Via: in.Via, At: &at, PullRequest: int32(o.PullRequest)} //nolint:gosec // pull request numbers fit
		key = rolloutsv1beta1.RetryAnnotation
		patch = abort.Patch(key, req)
	case ActionApprove, ActionPromoteFull:
		a := approval.Approval{Revision: o.Rollout.CanaryRevision, Step: in.Step, By: in.By, Via: in.Via, At: &at, Commit: in.Commit,
			PullRequest: int32(in.PullRequest)} //nolint:gosec // pull request numbers fit
		for _, p := range in.Approvers {
			pat := p.At.UTC()
			a.Approvers = append(a.Approvers, approval.Approver{By: p.By, Via: p.Via, At: &pat, Commit: p.Commit, PullRequest: int32(p.PullRequest)}) //nolint:gosec // pull request numbers fit
		}
		key = rolloutsv1beta1.ApproveAnnotation
		patch = map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: approval.Encode(a)}}}
	}
	b, _ := json.Marshal(patch)
	if err := r.Client.Patch(ctx, ro.DeepCopy(), client.RawPatch(types.MergePatchType, b), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("writing %s: %w", key, err)
	}
	switch in.Action {
	case ActionRollback:
		if in.Rejected {
			r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, ReasonRejected, "Reject",
				"Revision %s rejected by %s via %s (%s): back on the stable revision %s, the release is aborted, the pod template left as Git has it; revert the commit in Git, or push a new one",
				short(o.Revision), in.By, in.Via, origin(in, s.policy, at), o.Rollout.StableRevision)
		} else {
			r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, "RolledBack", "Rollback",
				"Revision %s rolled back to the stable revision %s by %s via %s (%s): the release is aborted, the pod template left as Git has it; revert the commit in Git, or push a new one",
				short(o.Revision), o.Rollout.StableRevision, in.By, in.Via, origin(in, s.policy, at))
		}
		if repo := scmRepositoryOf(s.gg); (onPullRequest(in.Via) || in.Via == ViaCheckRun) && s.c.scm != nil && repo != nil && repo.ProposeRevert {
			r.proposeRevert(ctx, s, ro, o, in)
		}
	case ActionRetry:
		r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, "GitRetry", "Retry",
			"Revision %s (commit %s) retried by %s via %s (%s): released again from step 1", o.Rollout.CanaryRevision, short(o.Revision), in.By, in.Via,
			origin(in, s.policy, at))
	case ActionApprove, ActionPromoteFull:
		r.Recorder.Eventf(ro, nil, corev1.EventTypeNormal, "GitApproval", "Approve",
			"Step %d of revision %s (commit %s) approved by %s", in.Step, o.Rollout.CanaryRevision, short(o.Revision), describeApprovers(in))
	}
	return nil
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
// that Git converges on the stable revision; its body says which Rollout,
// at which step and who rolled it back. Failing to is reported, never
// fatal: the release is aborted either way.
func (r *Reconciler) proposeRevert(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o Observation, in Intent) {
	sha := o.Revision
	done := "rolled back"
	if in.Rejected {
		done = "rejected"
	}
	body := fmt.Sprintf("Reverts %s.\n\nThe release of this commit by Rollout %s/%s was %s at step %d/%d by %s via %s: "+
		"every pod and all traffic went back to the stable revision %s, and sluice holds them there until this revert (or a new commit) syncs.",
		sha, ro.Namespace, ro.Name, done, o.Rollout.Step, o.Rollout.Steps, in.By, in.Via, o.Rollout.StableRevision)
	if o.PullRequest != 0 {
		body += fmt.Sprintf("\n\nPull request #%d brought it.", o.PullRequest)
	}
	p, err := s.c.scm.ProposeRevert(ctx, scm.RevertRequest{MergeCommitSHA: sha, Base: branchOf(s.gg), Body: body})
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
	ri := gitopsv1alpha1.RefusedIntent{Reason: rej.Reason, Message: rej.Message, By: rej.By, Via: rej.Via, Commit: rej.Commit, PullRequest: rej.PullRequest}
	if !rej.At.IsZero() {
		at := metav1.NewTime(rej.At)
		ri.At = &at
	}
	list = append(list, ri)
	if len(list) > 10 {
		list = list[len(list)-10:]
	}
	return list
}

// givenApprovals converts the approvers of an intent for the status.
func givenApprovals(in []Approver) []gitopsv1alpha1.GivenApproval {
	var out []gitopsv1alpha1.GivenApproval
	for _, a := range in {
		keys := a.Keys
		if len(keys) > 10 { // the API's bound: one person's ten latest ways of approving one step
			keys = keys[len(keys)-10:]
		}
		out = append(out, gitopsv1alpha1.GivenApproval{Action: string(a.Action), By: a.By, Via: a.Via, At: metav1.NewTime(a.At), Commit: a.Commit,
			PullRequest: a.PullRequest, Required: a.Required, Keys: keys})
	}
	if len(out) > 20 {
		out = out[len(out)-20:]
	}
	return out
}

// quorumStatus converts where a step's approval stands for the status.
func quorumStatus(q *Quorum) *gitopsv1alpha1.QuorumStatus {
	if q == nil {
		return nil
	}
	return &gitopsv1alpha1.QuorumStatus{Step: q.Step, Needed: q.Needed, Approvals: givenApprovals(q.Approvers), Waiting: q.Waiting}
}

// describeApprovers says who approved, how, when, and on which pull request
// or in which commit, for an event: "jane via github-label at
// 2026-12-01T10:01:00Z on pull request #42".
func describeApprovers(in Intent) string {
	list := in.Approvers
	if len(list) == 0 {
		list = []Approver{{By: in.By, Via: in.Via, At: in.At, Commit: in.Commit, PullRequest: in.PullRequest}}
	}
	parts := make([]string, 0, len(list))
	for _, a := range list {
		p := a.By + " via " + a.Via
		if !a.At.IsZero() {
			p += " at " + a.At.UTC().Format(time.RFC3339)
		}
		switch {
		case a.PullRequest != 0:
			p += fmt.Sprintf(" on pull request #%d", a.PullRequest)
		case a.Commit != "":
			p += " in commit " + short(a.Commit)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// onPullRequest tells whether an intent arrived via a label or a comment
// command on a pull request, of any host.
func onPullRequest(via string) bool {
	return isLabel(via) || strings.HasSuffix(via, "-"+viaComment)
}

// stopSource names what asked for a rollback or rejection on a pull
// request: "label sluice/reject", "comment /sluice reject".
func stopSource(in Intent, p Policy) string {
	if strings.HasSuffix(in.Via, "-"+viaComment) {
		c := command.Command{Verb: command.Rollback}
		if in.Rejected {
			c.Verb = command.Reject
		}
		return "comment " + c.String()
	}
	if in.Rejected {
		return "label " + p.RejectLabel
	}
	return "label " + p.RollbackLabel
}

// origin says where and when a stop or retry was asked for, for an event:
// "label sluice/reject on pull request #42 at 2026-12-01T10:01:00Z",
// "commit 1a2b3c4d5e6f at ...".
func origin(in Intent, p Policy, at time.Time) string {
	var where string
	switch {
	case onPullRequest(in.Via) && in.Action == ActionRetry:
		where = fmt.Sprintf("on pull request #%d ", in.PullRequest)
	case onPullRequest(in.Via):
		where = fmt.Sprintf("%s on pull request #%d ", stopSource(in, p), in.PullRequest)
	case in.Commit != "":
		where = "commit " + short(in.Commit) + " "
	}
	return where + "at " + at.UTC().Format(time.RFC3339)
}
