package gitops

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/appliedcommit"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// The observation of one bound Rollout: what the gate reads of its
// release, its commits and its pull requests, for Decide.

// previous is what the gate recorded of the Rollout name at its last
// reconcile (empty when it recorded nothing).
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
	o := Observation{Rollout: viewOf(ro), Policy: s.policy, Host: s.host, Now: r.Clock.Now()}
	o.Context, o.TargetURL = statusNames(s.gg, ro, "")
	spec := s.gg.Spec.Revision
	// When the workload's own annotation names its commit, the commit and
	// the pod template come in the one copy read, so a copy the cache has
	// not brought up to date only delays the gate (the Rollout is then
	// ahead of it: caughtUp says so, and the gate looks again). A commit
	// the GitOps tool records on another object is read against a fresh
	// copy of the workload.
	w, err := r.workload(ctx, ro, appliedcommit.Source(spec.From) == appliedcommit.SourceAnnotation)
	if err != nil {
		return o, err
	}
	u, err := asUnstructured(w)
	if err != nil {
		return o, err
	}
	s.noteReplicas(ro.Name, replicasOf(u))
	ann := spec.Annotation
	if ann == "" {
		ann = gitopsv1alpha1.DefaultRevisionAnnotation
	}
	rev, err := appliedcommit.Resolver{Reader: r.APIReader}.Of(ctx, w, appliedcommit.Options{Source: appliedcommit.Source(spec.From), Annotation: ann,
		PathAnnotation: gitopsv1alpha1.RevisionPathAnnotation, ArgoCDNamespace: spec.ArgoCDNamespace})
	if err != nil {
		return o, err
	}
	if err := r.caughtUp(ctx, ro, w, o.Rollout); err != nil {
		return o, err
	}
	o.Revision = keptRevision(prev, o.Rollout, rev.SHA)
	if toolLags(prev, o.Rollout, o.Revision) {
		return o, fmt.Errorf("%w: a new release of %s started, and %s still names commit %s, which was released as %s",
			appliedcommit.ErrApplying, o.Rollout.CanaryRevision, rev.From, short(rev.SHA), prev.CanaryRevision)
	}
	o.Tracked = prev.Posted != nil && prev.Posted.SHA == o.Revision
	if o.Tracked {
		o.LastPosted = scm.CommitState(prev.Posted.State)
	}
	_, o.TargetURL = statusNames(s.gg, ro, o.Revision)
	if prev.Revision == o.Revision {
		o.Commits = prev.Commits
		for _, a := range prev.Approvals {
			ap := Applied{Action: Action(a.Action), Step: a.Step, By: a.By, Via: a.Via, Key: a.Key, At: a.At.Time, Rejected: a.Rejected}
			for _, g := range a.Approvers {
				ap.Keys = append(ap.Keys, g.Keys...)
			}
			o.Applied = append(o.Applied, ap)
		}
	} else {
		o.Commits = r.releaseCommits(ctx, s, prev.Revision, o.Revision, rev.Path)
	}
	arrivals, err := s.c.git.CommitsSince(ctx, o.Revision)
	if err != nil {
		return o, fmt.Errorf("commit %s is not on branch %s: %w", short(o.Revision), branchOf(s.gg), err)
	}
	if len(arrivals) > maxArrivals {
		arrivals = arrivals[len(arrivals)-maxArrivals:]
	}
	r.observeCommits(ctx, s, ro, &o, arrivals)
	r.observeDeclared(ctx, s, ro, &o, rev.Path)
	r.observeGitAuthors(ctx, s, &o)
	r.observeCodeOwners(ctx, s, &o, rev.Path)
	r.observePullRequests(ctx, s, &o)
	r.observePresses(ctx, s, ro, &o)
	return o, nil
}

// keptRevision is the commit a Rollout is released from, given the commit
// the GitOps tool last applied. The tool's revision moves on with every
// commit of the branch it applies (a trailer approval, a commit to another
// path), while the release of the commit that changed the workload goes on:
// keep that one as long as the release of the same workload revision goes
// on, and, once it has finished, until its final status is posted on it (its
// last status there still pending), so that "released" lands on the commit
// that was released. A release rolled back (its failure posted) or reverted
// (the workload back on the stable revision it replaced) keeps its commit
// until a new release starts, so that the revert's status is completed.
func keptRevision(prev gitopsv1alpha1.BoundRollout, r RolloutView, applied string) string {
	if prev.Revision == "" {
		return applied
	}
	posted := prev.Posted != nil && prev.Posted.SHA == prev.Revision
	newRelease := r.InRelease && r.CanaryRevision != prev.CanaryRevision
	if posted && prev.Posted.State == string(scm.StateFailure) && !newRelease {
		// Rolled back: the revision keeps its failure and the revert
		// reports the rollback, done once the Rollout is healthy again.
		return prev.Revision
	}
	unfinished := posted && prev.Posted.State == string(scm.StatePending)
	if prev.CanaryRevision != r.CanaryRevision {
		if unfinished && !r.InRelease && prev.StableRevision != "" && r.CanaryRevision == prev.StableRevision {
			// Back on the stable revision it replaced before the gate
			// saw a rollback: a revert synced at once.
			return prev.Revision
		}
		return applied
	}
	if r.InRelease || r.Aborted != nil {
		return prev.Revision
	}
	if unfinished && (!r.Healthy || r.StableRevision == r.CanaryRevision) {
		return prev.Revision
	}
	return applied
}

// toolLags tells whether a new release started while the GitOps tool still
// names the commit the previous one was of: the tool applies a commit
// before it records it as applied, so the new pod template's commit is not
// known yet (a template changed outside Git has none). Tying the release to
// that commit would tie it to the previous release's.
func toolLags(prev gitopsv1alpha1.BoundRollout, r RolloutView, kept string) bool {
	return kept != "" && kept == prev.Revision && prev.CanaryRevision != "" && r.InRelease && r.CanaryRevision != prev.CanaryRevision
}

// observeCommits finds the trailers for ro and a revert of the revision
// (or of any of the release's commits) among the commits that arrived after
// it.
func (r *Reconciler) observeCommits(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, o *Observation, arrivals []git.Arrival) {
	for _, a := range arrivals {
		for _, target := range o.releaseSHAs() {
			if o.RevertedBy != "" {
				break
			}
			if m, err := s.c.git.Reverts(ctx, a.SHA, target); err == nil && m.Reverts {
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

// teamsOf returns the teams of ask (the policy's TeamsToAsk) user is an
// active member of, asking the SCM only until a team admits them.
func (r *Reconciler) teamsOf(ctx context.Context, s *scope, user string, ask []string) ([]string, error) {
	if len(ask) == 0 {
		return nil, nil
	}
	if teams, ok := s.teamsOf(user); ok {
		return teams, nil
	}
	var teams []string
	for _, team := range ask {
		org, slug, _ := strings.Cut(team, "/")
		member, err := s.c.scm.TeamMember(ctx, org, slug, user)
		if err != nil {
			return nil, err
		}
		if member {
			teams = append(teams, team)
			break
		}
	}
	s.setTeams(user, teams)
	return teams, nil
}

// workload reads ro's workload: a kind the controllers watch from their
// start as its typed object, from the cache when cached is true, else from
// the API server; any other kind from the API server, unstructured.
func (r *Reconciler) workload(ctx context.Context, ro *rolloutsv1beta1.Rollout, cached bool) (client.Object, error) {
	ref := ro.Spec.WorkloadRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: ro.Namespace, Name: ref.Name}
	if w, ok := kinds.NewObject(gv.WithKind(ref.Kind).GroupKind()); ok {
		reader := r.APIReader
		if cached {
			reader = r.Client
		}
		if err := reader.Get(ctx, key, w); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
		}
		w.GetObjectKind().SetGroupVersionKind(gv.WithKind(ref.Kind))
		return w, nil
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.APIReader.Get(ctx, key, w); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	return w, nil
}

// asUnstructured is w as an unstructured object, its kind set, without its
// managedFields (the bulk of a workload, which the gate never reads).
func asUnstructured(w client.Object) (*unstructured.Unstructured, error) {
	if u, ok := w.(*unstructured.Unstructured); ok {
		return u, nil
	}
	managed := w.GetManagedFields()
	w.SetManagedFields(nil)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	w.SetManagedFields(managed)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", w.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(w.GetObjectKind().GroupVersionKind())
	return u, nil
}

// viewOf reads the release of ro (release/progress).
func viewOf(ro *rolloutsv1beta1.Rollout) RolloutView {
	v := RolloutView{Namespace: ro.Namespace, Name: ro.Name, Steps: progress.Steps(ro)}
	p, ok := progress.Of(ro)
	v.CanaryRevision = p.Revision
	v.Healthy = ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy
	if c, err := approval.ParseContext(ro.Annotations[rolloutsv1beta1.RetryContextAnnotation]); err == nil {
		v.RetriedAt = c.At
	}
	if !ok {
		return v
	}
	common := p.Common
	v.Step, v.StableRevision = common.CurrentStepIndex, common.StableRevision
	v.InRelease = progress.InRelease(ro)
	if ab := ro.Status.Aborted; ab != nil {
		v.InRelease = false
		v.Aborted = &AbortView{Step: ab.Step, By: ab.By, Via: ab.Via, Held: ab.Held, Reason: ab.Reason}
		if ab.At != nil {
			v.Aborted.At = ab.At.Time
		}
	}
	v.Paused = common.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	if c := progress.Condition(ro, canary.RolloutConditionAnalysis); c != nil {
		v.Analysis, v.AnalysisRunning = c.Message, c.Reason == canary.AnalysisReasonRunning
	}
	if common.LastUpdateTime != nil {
		v.PausedAt = common.LastUpdateTime.Time
	}
	if c := progress.Condition(ro, rolloutsv1beta1.RolloutConditionProgressing); c != nil && c.Status == corev1.ConditionTrue {
		v.StartedAt = c.LastTransitionTime.Time
	}
	return v
}
