package gitops

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/prview"
	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload/batch"
)

// The pull request as the release's control surface: each bound Rollout keeps one comment on
// the release's pull request and, where sluice runs as a GitHub App, one check run with
// buttons on the commit being released. gitops/prview renders both from the same Release.
// Both are best effort, posted after the commit statuses, and only when they changed (the SCM
// clients remember what they wrote).

// Reasons of the events the surface raises.
const (
	// ReasonCommentRefused: the host refused sluice's comment (the credentials may not
	// comment); sluice stops trying until the gate's spec or secrets change.
	ReasonCommentRefused = "CommentRefused"
	// ReasonCheckRunRefused: GitHub refused sluice's check run (the App lacks the checks
	// permission); sluice stops trying until the gate's spec or secrets change.
	ReasonCheckRunRefused = "CheckRunRefused"
)

// surfaceDenied remembers, for one gate's clients, that the host refused sluice's comments
// or check runs for want of permission: retrying every reconcile would spend the request
// budget for nothing. New clients (a changed spec or secret) try again.
type surfaceDenied struct {
	mu               sync.Mutex
	comments, checks bool
}

func (d *surfaceDenied) get() (comments, checks bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.comments, d.checks
}

func (d *surfaceDenied) deny(comments, checks bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.comments, d.checks = d.comments || comments, d.checks || checks
}

// postSurface posts the sticky comment and the check run of one Rollout from what the gate
// decided (out, and the commit status on its revision among posts). Nothing is sent while
// the host asks to wait, nor when there is no release to tell of.
func (r *Reconciler) postSurface(ctx context.Context, s *scope, ro *rolloutsv1beta1.Rollout, out *gitopsv1alpha1.BoundRollout, posts []Post) {
	if s.c == nil || s.c.scm == nil || out.Revision == "" {
		return
	}
	var status *scm.CommitStatus
	for i := range posts {
		if posts[i].SHA == out.Revision {
			status = &posts[i].Status
			break
		}
	}
	if status == nil {
		return
	}
	spec := s.gg.Spec.Status
	deniedComments, deniedChecks := s.c.denied.get()
	checks := s.c.checks
	if spec.DisableCheckRuns || deniedChecks {
		checks = nil
	}
	rel := releaseView(ro, *out, *status, s.policy, s.workloadReplicas(ro.Name), checks != nil)
	_, limited := s.rateLimited(r.Clock.Now())
	log := ctrl.LoggerFrom(ctx).WithValues("rollout", client.ObjectKeyFromObject(ro))
	if !spec.DisableComment && !deniedComments && out.PullRequest > 0 && !limited {
		if _, err := s.c.scm.UpsertComment(ctx, out.PullRequest, ro.Namespace+"/"+ro.Name, prview.Markdown(rel)); err != nil {
			s.noteSCM(err)
			log.Info("Pull request comment not posted", "pullRequest", out.PullRequest, "reason", err.Error())
			if scm.IsUnauthorized(err) {
				s.c.denied.deny(true, false)
				r.emitOnce([]client.Object{s.gg}, ReasonCommentRefused, fmt.Sprintf(
					"Commenting on pull request #%d was refused (%v): sluice posts no comment until the credentials may comment (GitHub: pull requests write; Gitea: write:issue; GitLab: the api scope), or set spec.status.disableComment", out.PullRequest, err))
			}
		}
	}
	if _, limited := s.rateLimited(r.Clock.Now()); checks != nil && !limited {
		if _, err := checks.SetCheckRun(ctx, out.Revision, prview.CheckRun(rel, status.Context, status.TargetURL)); err != nil {
			s.noteSCM(err)
			log.Info("Check run not posted", "sha", out.Revision, "reason", err.Error())
			if scm.IsUnauthorized(err) {
				s.c.denied.deny(false, true)
				r.emitOnce([]client.Object{s.gg}, ReasonCheckRunRefused, fmt.Sprintf(
					"Writing check run %s was refused (%v): sluice posts no check run until the GitHub App has the checks write permission, or set spec.status.disableCheckRuns", status.Context, err))
			}
		}
	}
}

// releaseView is what the pull request shows of ro's release: out is what the gate recorded
// of it, status the commit status decided for its revision, replicas the workload's pods
// (0: unknown) and buttons whether the check run offers them.
func releaseView(ro *rolloutsv1beta1.Rollout, out gitopsv1alpha1.BoundRollout, status scm.CommitStatus, p Policy, replicas int32, buttons bool) prview.Release {
	rel := prview.Release{
		Rollout: ro.Namespace + "/" + ro.Name, Commit: out.Revision, Headline: status.Description, Step: out.Step, Steps: out.Steps,
		PullRequest: out.PullRequest,
		Commands: prview.Commands{Approve: p.ApproveLabel, PromoteFull: p.PromoteFullLabel, Rollback: p.RollbackLabel, Reject: p.RejectLabel,
			Retry: p.RetryLabel, Comments: p.Comments, Buttons: buttons},
	}
	_, rel.Aborted = progress.AbortOf(ro)
	switch status.State {
	case scm.StateSuccess:
		rel.State = prview.StateSucceeded
	case scm.StateFailure, scm.StateError:
		rel.State = prview.StateFailed
	default:
		rel.State = prview.StateInProgress
		if progress.WaitOf(ro).Kind == progress.WaitApproval {
			rel.State = prview.StateWaiting
		}
	}
	states := progress.StepStates(ro)
	for i, st := range ro.Spec.Strategy.Steps() {
		rel.StepList = append(rel.StepList, prview.Step{Replicas: progress.StepReplicas(st), Traffic: progress.StepTraffic(st),
			Pause: progress.StepPause(ro, i, replicas), Mark: string(states[i])})
	}
	rel.Revisions, rel.TrafficNote = revisionsOf(ro, replicas)
	for _, a := range out.Approvals {
		rel.Approvals = append(rel.Approvals, prview.Approval{Action: a.Action, Step: a.Step, By: a.By, Via: a.Via, At: a.At.Time, Rejected: a.Rejected})
	}
	for _, f := range out.Refused {
		rel.Refused = append(rel.Refused, prview.Refusal{Reason: f.Reason, Message: f.Message})
	}
	if q := out.Quorum; q != nil {
		rel.Quorum = &prview.Quorum{Step: q.Step, Needed: q.Needed, Waiting: q.Waiting}
		for _, a := range q.Approvals {
			rel.Quorum.Approvals = append(rel.Quorum.Approvals, prview.GivenApproval{Action: a.Action, By: a.By, Via: a.Via, At: a.At.Time,
				Commit: a.Commit, PullRequest: a.PullRequest, Required: a.Required})
		}
	}
	return rel
}

// revisionsOf splits ro's pods and requests between its revisions as the current step wants
// them (not as the pods come and go, so that the comment changes with the release, not with
// every pod that turns ready): while a release is in progress the stable and the canary
// revision, with the step's pods (release/progress's step, resolved against the workload's
// replicas) and the step's weight on the routes, else the share of pods; otherwise the one
// revision every pod runs.
func revisionsOf(ro *rolloutsv1beta1.Rollout, replicas int32) ([]prview.Revision, string) {
	p, ok := progress.Of(ro)
	if !ok {
		return nil, ""
	}
	if a, aborted := progress.AbortOf(ro); aborted {
		return []prview.Revision{{Name: a.StableRevision, Role: "stable", Pods: replicas, Percent: 100}},
			"Aborted: " + a.State() + "."
	}
	steps := ro.Spec.Strategy.Steps()
	idx := p.Common.CurrentStepIndex
	if !progress.InRelease(ro) || idx < 1 || int(idx) > len(steps) {
		return []prview.Revision{{Name: p.Revision, Role: "current", Pods: replicas, Percent: 100}}, ""
	}
	canaryPods, err := batch.DesiredUpdated(steps[idx-1].Replicas, replicas)
	if err != nil {
		canaryPods = p.Updated
	}
	stablePods := max(replicas-canaryPods, 0)
	if s := ro.Spec.Strategy; s.BlueGreen != nil || s.Canary != nil && s.Canary.EnableExtraWorkloadForCanary {
		stablePods = replicas // the new revision's pods come beside the stable ones
	}
	canary := prview.Revision{Name: p.Revision, Role: "canary", Pods: canaryPods, Percent: -1}
	stable := prview.Revision{Name: p.Common.StableRevision, Role: "stable", Pods: stablePods, Percent: -1}
	note := fmt.Sprintf("Pods: what step %d releases.", idx)
	switch w, weighted := progress.Weight(ro); {
	case weighted:
		canary.Percent, stable.Percent = w, 100-w
		note += fmt.Sprintf(" Requests: the weight of step %d on the routes.", idx)
	case canaryPods+stablePods > 0:
		canary.Percent = int(canaryPods * 100 / (canaryPods + stablePods))
		stable.Percent = 100 - canary.Percent
		note += " Requests: no weight on the routes, so they spread over the ready pods of both revisions, about this share once all are ready."
	}
	return []prview.Revision{stable, canary}, note
}

// noteReplicas records how many pods the workload of the Rollout name asks for (the Rollouts
// are observed concurrently).
func (s *scope) noteReplicas(name string, n int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas[name] = n
}

// workloadReplicas is how many pods the workload of the Rollout name asks for (0: unknown).
func (s *scope) workloadReplicas(name string) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas[name]
}

// replicasOf is how many pods the workload w asks for: spec.replicas (1 when unset, as the
// kinds with replicas default it), or, for a DaemonSet, how many it schedules.
func replicasOf(w *unstructured.Unstructured) int32 {
	if n, found, err := unstructured.NestedInt64(w.Object, "spec", "replicas"); err == nil && found {
		return int32(n) //nolint:gosec // replicas fit
	}
	if n, found, err := unstructured.NestedInt64(w.Object, "status", "desiredNumberScheduled"); err == nil && found {
		return int32(n) //nolint:gosec // a DaemonSet's pods fit
	}
	if w.GetKind() == "DaemonSet" {
		return 0
	}
	return 1
}
