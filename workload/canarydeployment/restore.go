package canarydeployment

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// restorePatch is the JSON merge patch kept in the sluice.dev/restore-patch
// annotation of the stable Deployment while a canary release holds it. It
// has the shape the in-place Deployment adapter uses (workload/deployment),
// on purpose: the webhook folds a user's changes of the held fields into it
// (deployment.MergeUserChanges), the Deployment adapter applies it when
// handing back, and users apply it by hand the same way for both styles.
// A canary release changes only spec.paused and sluice's marks; the timing
// and strategy are recorded as they are, so applying the patch leaves them
// unchanged unless the user changed them during the release.
type restorePatch struct {
	Metadata restoreMeta `json:"metadata"`
	Spec     restoreSpec `json:"spec"`
}

type restoreMeta struct {
	Annotations map[string]*string `json:"annotations"`
	Labels      map[string]*string `json:"labels"`
}

type restoreSpec struct {
	Paused                  bool            `json:"paused"`
	MinReadySeconds         int32           `json:"minReadySeconds"`
	ProgressDeadlineSeconds *int32          `json:"progressDeadlineSeconds"`
	Strategy                restoreStrategy `json:"strategy"`
}

type restoreStrategy struct {
	RollingUpdate restoreRollingUpdate `json:"rollingUpdate"`
}

type restoreRollingUpdate struct {
	MaxSurge       *intstr.IntOrString `json:"maxSurge"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
}

// newRestorePatch records the fields of the stable Deployment d that
// handing it back sets: unpaused, its own timing and strategy, none of
// sluice's marks.
func newRestorePatch(d *appsv1.Deployment) restorePatch {
	p := restorePatch{
		Metadata: restoreMeta{
			Annotations: map[string]*string{
				rolloutsv1beta1.DeploymentOriginalAnnotation: nil,
				rolloutsv1beta1.ControlInfoAnnotation:        nil,
				rolloutsv1beta1.InProgressingAnnotation:      nil,
			},
			Labels: map[string]*string{rolloutsv1beta1.StableRevisionLabel: nil},
		},
		Spec: restoreSpec{
			MinReadySeconds:         d.Spec.MinReadySeconds,
			ProgressDeadlineSeconds: d.Spec.ProgressDeadlineSeconds,
		},
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		p.Spec.Strategy.RollingUpdate = restoreRollingUpdate{MaxSurge: ru.MaxSurge, MaxUnavailable: ru.MaxUnavailable}
	}
	return p
}

// stableRevision picks the pod-template-hash of the revision a release of
// d replaces from d's ReplicaSets: of those d controls whose template is not
// d's, the newest that has pods, else the newest. It is empty when there is
// none.
func stableRevision(d *appsv1.Deployment, sets []appsv1.ReplicaSet) string {
	var best *appsv1.ReplicaSet
	better := func(rs *appsv1.ReplicaSet) bool {
		if best == nil {
			return true
		}
		if active, bestActive := replicasOfSet(rs) > 0, replicasOfSet(best) > 0; active != bestActive {
			return active
		}
		return revisionOf(rs) > revisionOf(best)
	}
	for i := range sets {
		rs := &sets[i]
		ref := metav1.GetControllerOf(rs)
		if ref == nil || ref.UID != d.UID || rs.DeletionTimestamp != nil || revisions.Equal(&rs.Spec.Template, &d.Spec.Template) {
			continue
		}
		if better(rs) {
			best = rs
		}
	}
	if best == nil {
		return ""
	}
	return best.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
}

func replicasOfSet(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	v, _ := strconv.ParseInt(rs.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return v
}
