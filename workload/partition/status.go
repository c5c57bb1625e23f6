package partition

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// podView is what a release reads from a workload's pods when its status
// does not say it.
type podView struct {
	// updatedReady counts the live, ready pods of the update revision.
	updatedReady int32
	// oldRevision is the revision most live pods not on the update revision
	// run; empty when every pod runs the update revision.
	oldRevision string
}

// viewPods summarizes pods, whose revision is the value of label, against
// the update revision.
func viewPods(pods []corev1.Pod, label, update string) podView {
	var v podView
	old := map[string]int{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		rev := p.Labels[label]
		if rev != update {
			old[rev]++
			continue
		}
		if podReady(p) {
			v.updatedReady++
		}
	}
	revs := make([]string, 0, len(old))
	for rev := range old {
		revs = append(revs, rev)
	}
	sort.Slice(revs, func(i, j int) bool {
		if old[revs[i]] != old[revs[j]] {
			return old[revs[i]] > old[revs[j]]
		}
		return revs[i] < revs[j]
	})
	if len(revs) > 0 {
		v.oldRevision = revs[0]
	}
	return v
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// held reports whether a release holds the workload: it carries sluice's
// in-progressing mark or restore patch.
func held(o object) bool {
	a := o.u.GetAnnotations()
	_, marked := a[rolloutsv1beta1.InProgressingAnnotation]
	_, restore := a[restoreAnnotation]
	return marked || restore
}

// unsupported says why o cannot be released in batches as configured, or
// "".
func unsupported(o object) string {
	if t := o.strategyType(); o.p.rollingUpdateOnly && t != "" && t != "RollingUpdate" {
		return fmt.Sprintf("spec.updateStrategy.type of %s is %s, which cannot be released in batches; use RollingUpdate", o.name(), t)
	}
	return ""
}

// statusOf computes the release-relevant status of o. pods is consulted
// for what the kind's status lacks; why is a reason the kind cannot be
// released (from its CRD), or "".
func statusOf(o object, pods podView, why string) *workload.Status {
	n := o.replicas()
	update := o.revision(o.p.update)
	s := &workload.Status{
		Generation:         o.u.GetGeneration(),
		ObservedGeneration: o.observedGeneration(),
		Replicas:           n,
		UpdateRevision:     update,
		PodTemplateHash:    update,
		RolloutID:          workload.RolloutID(o.u.GetLabels(), o.u.GetAnnotations()),
		InProgressRollout:  workload.InProgressRollout(o.u.GetAnnotations()),
		Labels:             o.u.GetLabels(),
		RevisionLabel:      o.p.revisionLabel,
		MaxUnavailable:     o.maxUnavailable(n),
		Unsupported:        why,
	}
	if s.Unsupported == "" {
		s.Unsupported = unsupported(o)
	}
	s.Disabled = notEnrolled(o)
	s.UpdatedReplicas, _ = o.statusInt(o.p.updated)
	if v, ok := o.statusInt(o.p.updatedReady); ok {
		s.UpdatedReadyReplicas = v
	} else {
		s.UpdatedReadyReplicas = pods.updatedReady
	}
	if sel, err := o.selector(); err == nil {
		s.PodSelector = sel
	}
	fresh := o.fresh()
	labelled := o.u.GetLabels()[rolloutsv1beta1.StableRevisionLabel]
	s.StableRevision = labelled
	if s.StableRevision == "" {
		s.StableRevision = stableCandidate(o, pods, update)
	}
	s.InRollback = labelled != "" && fresh && update == labelled && held(o)
	if o.p.nodes {
		scheduled, _ := o.statusInt([]string{"status", "currentNumberScheduled"})
		s.Settled = fresh && scheduled == n
	} else {
		replicas, _ := o.statusInt([]string{"status", "replicas"})
		s.Settled = fresh && replicas == n
	}
	kept, err := o.partitionCount(n)
	if err != nil {
		kept = 0
	}
	want := max(n-min(kept, n), 0)
	s.UpToDate = !held(o) && s.Settled && s.UpdatedReplicas >= want && s.UpdatedReadyReplicas >= want
	return s
}

// stableCandidate is the revision a release that starts now replaces: the
// status' current revision when it is not the update revision, else the
// revision most old pods run (for kinds whose status names none).
func stableCandidate(o object, pods podView, update string) string {
	if o.p.current != nil {
		if cur := o.revision(o.p.current); cur != update {
			return cur
		}
		return ""
	}
	return pods.oldRevision
}

// notEnrolled says why a custom kind's object does not take part in
// releases: as OpenKruise documents, the object itself must carry
// rollouts.kruise.io/workload-type: statefulset. Empty when it does, and
// for the kinds sluice knows.
func notEnrolled(o object) string {
	if !o.p.custom || o.u.GetLabels()[rolloutsv1beta1.WorkloadTypeLabel] == rolloutsv1beta1.WorkloadTypeStatefulSet {
		return ""
	}
	return fmt.Sprintf("%s %s is not labelled %s=%s, so it is not released in batches; label it: kubectl label %s %s %s=%s",
		o.u.GetKind(), o.u.GetName(), rolloutsv1beta1.WorkloadTypeLabel, rolloutsv1beta1.WorkloadTypeStatefulSet,
		strings.ToLower(o.u.GetKind()), o.u.GetName(), rolloutsv1beta1.WorkloadTypeLabel, rolloutsv1beta1.WorkloadTypeStatefulSet)
}
