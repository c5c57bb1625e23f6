// Package progress is the one answer to "where is this release": it reads a
// Rollout's release whichever status holds it (status.canaryStatus for
// canary and multi-batch releases, status.blueGreenStatus for blue-green
// ones) and writes it back there (Put), and it describes the release for
// people (describe.go). The step machine (release/canary), the Rollout and
// GitOps controllers, the release metrics, the Rollout webhook, kubectl
// sluice and the web view all read a release through it, so none of them
// forgets blue-green Rollouts and the two views never disagree.
package progress

import (
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Progress is the release of a Rollout, whichever status holds it.
type Progress struct {
	// Common is the step progress shared by canary and blue-green releases.
	Common rolloutsv1beta1.CommonStatus
	// Revision is the revision being released (canaryRevision, or
	// updatedRevision of a blue-green release).
	Revision string
	// Updated and UpdatedReady count the pods of the new revision, and those
	// of them that are ready.
	Updated, UpdatedReady int32
	// BlueGreen is true when the progress came from status.blueGreenStatus.
	BlueGreen bool
}

// Of returns the progress of ro's release, and false when its status holds
// none (a Rollout that never saw its workload).
func Of(ro *rolloutsv1beta1.Rollout) (Progress, bool) {
	switch st := ro.Status; {
	case st.BlueGreenStatus != nil:
		bg := st.BlueGreenStatus
		return Progress{Common: *bg.CommonStatus.DeepCopy(), Revision: bg.UpdatedRevision, Updated: bg.UpdatedReplicas,
			UpdatedReady: bg.UpdatedReadyReplicas, BlueGreen: true}, true
	case st.CanaryStatus != nil:
		cs := st.CanaryStatus
		return Progress{Common: *cs.CommonStatus.DeepCopy(), Revision: cs.CanaryRevision, Updated: cs.CanaryReplicas,
			UpdatedReady: cs.CanaryReadyReplicas}, true
	}
	return Progress{}, false
}

// Put writes p, the release of ro, into st where ro's strategy keeps it:
// status.blueGreenStatus for a blue-green Rollout (as OpenKruise does, so
// that kubectl-kruise finds it there), status.canaryStatus otherwise. The
// other one is cleared; a nil p clears both.
func Put(ro *rolloutsv1beta1.Rollout, st *rolloutsv1beta1.RolloutStatus, p *Progress) {
	st.CanaryStatus, st.BlueGreenStatus = nil, nil
	switch {
	case p == nil:
	case ro.Spec.Strategy.BlueGreen != nil:
		st.BlueGreenStatus = &rolloutsv1beta1.BlueGreenStatus{CommonStatus: *p.Common.DeepCopy(), UpdatedRevision: p.Revision,
			UpdatedReplicas: p.Updated, UpdatedReadyReplicas: p.UpdatedReady}
	default:
		st.CanaryStatus = &rolloutsv1beta1.CanaryStatus{CommonStatus: *p.Common.DeepCopy(), CanaryRevision: p.Revision,
			CanaryReplicas: p.Updated, CanaryReadyReplicas: p.UpdatedReady}
	}
}

// NewPodRevision is the value of the workload's revision label on pods of
// the new revision: the podTemplateHash once known, else the revision.
func (p Progress) NewPodRevision() string {
	if p.Common.PodTemplateHash != "" {
		return p.Common.PodTemplateHash
	}
	return p.Revision
}

// InRelease reports whether a release of ro is in progress and not yet
// finishing: the Rollout is Progressing and its steps are not all done.
func InRelease(ro *rolloutsv1beta1.Rollout) bool {
	p, ok := Of(ro)
	return ok && ro.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing &&
		p.Common.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted
}

// Steps is the number of steps of ro's strategy.
func Steps(ro *rolloutsv1beta1.Rollout) int32 {
	return int32(len(ro.Spec.Strategy.Steps())) //nolint:gosec // at most 50 steps (CRD validation)
}

// Ref names a Rollout the way the plugin's messages do: namespace/name.
func Ref(ro *rolloutsv1beta1.Rollout) string {
	return fmt.Sprintf("%s/%s", ro.Namespace, ro.Name)
}

// Condition returns ro's condition of type typ, or nil.
func Condition(ro *rolloutsv1beta1.Rollout, typ rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range ro.Status.Conditions {
		if ro.Status.Conditions[i].Type == typ {
			return &ro.Status.Conditions[i]
		}
	}
	return nil
}

// Command is the plugin command line that runs verb on ro, for the hints
// in messages: Command(ro, "status", "--watch") is
// "kubectl sluice status web -n shop --watch".
func Command(ro *rolloutsv1beta1.Rollout, verb string, extra ...string) string {
	s := fmt.Sprintf("kubectl sluice %s %s -n %s", verb, ro.Name, ro.Namespace)
	for _, e := range extra {
		s += " " + e
	}
	return s
}

// RoleOf says what the revision that is reports true for is to the
// release: "stable", "new", "current" (both: a release not started, or
// rolled back) or "other".
func (p Progress) RoleOf(is func(revision string) bool) string {
	stable := is(p.Common.StableRevision)
	isNew := is(p.NewPodRevision()) || is(p.Revision)
	switch {
	case stable && isNew:
		return "current"
	case stable:
		return "stable"
	case isNew:
		return "new"
	}
	return "other"
}
