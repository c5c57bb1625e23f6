package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// statusOf computes the release-relevant status of ds from its revisions
// and its pods, counted in t against rev.update.
func statusOf(ds *appsv1.DaemonSet, rev revisions, t tally) *workload.Status {
	n := ds.Status.DesiredNumberScheduled
	s := &workload.Status{
		Generation:           ds.Generation,
		ObservedGeneration:   ds.Status.ObservedGeneration,
		Replicas:             n,
		UpdatedReplicas:      t.Updated,
		UpdatedReadyReplicas: t.UpdatedReady,
		StableRevision:       ds.Labels[rolloutsv1beta1.StableRevisionLabel],
		UpdateRevision:       rev.update,
		PodTemplateHash:      rev.update,
		RolloutID:            workload.RolloutID(ds.Labels, ds.Annotations),
		InProgressRollout:    workload.InProgressRollout(ds.Annotations),
		PodSelector:          ds.Spec.Selector,
		RevisionLabel:        appsv1.DefaultDaemonSetUniqueLabelKey,
		Labels:               ds.Labels,
	}
	s.InRollback = s.StableRevision != "" && s.UpdateRevision == s.StableRevision
	if strategy, err := userStrategy(ds); err == nil {
		s.MaxUnavailable = maxUnavailableOf(strategy, n)
	}
	current := ds.Status.ObservedGeneration >= ds.Generation
	s.Settled = current && t.settled(n)
	_, held := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	s.UpToDate = !held && current && t.settled(n) && t.Updated == n && t.UpdatedReady == n &&
		ds.Status.UpdatedNumberScheduled == n && ds.Status.NumberAvailable == n
	return s
}

// maxUnavailableOf resolves the DaemonSet's own maxUnavailable against its
// replicas the way its controller does (a percentage rounds up). It is at
// least 1: a DaemonSet that surges instead (maxUnavailable 0) cannot surge
// while sluice replaces its pods by deleting them, one at a time.
func maxUnavailableOf(s appsv1.DaemonSetUpdateStrategy, replicas int32) int32 {
	one := intstr.FromInt32(1)
	v := &one
	if ru := s.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v = ru.MaxUnavailable
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(v, int(replicas), true)
	if err != nil || u < 1 {
		return 1
	}
	return int32(min(u, int(max(replicas, 1)))) //nolint:gosec // bounded by replicas
}
