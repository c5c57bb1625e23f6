package daemonset

import (
	"encoding/json"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadrevisions "github.com/sluice-dev/sluice/workload/revisions"
)

// revisions are the two revisions a release of a DaemonSet moves between,
// as values of the pods' controller-revision-hash label.
type revisions struct {
	// update is the revision of the DaemonSet's current pod template.
	update string
	// previous is the newest other revision the DaemonSet had, empty when
	// it never had another.
	previous string
}

// revisionsOf finds the revisions of ds among its ControllerRevisions
// (those it controls). The update revision is the ControllerRevision whose
// template is the DaemonSet's: the DaemonSet controller makes it the newest
// (highest .revision), reusing an old one when the template goes back to
// it. Until the controller has written it, the update revision is the hash
// the controller will give it, computed from the template as it does.
func revisionsOf(ds *appsv1.DaemonSet, history []appsv1.ControllerRevision) revisions {
	owned := make([]*appsv1.ControllerRevision, 0, len(history))
	for i := range history {
		cr := &history[i]
		if ref := metav1.GetControllerOf(cr); ref != nil && ref.UID == ds.UID && cr.DeletionTimestamp == nil {
			owned = append(owned, cr)
		}
	}
	sort.SliceStable(owned, func(i, j int) bool { return owned[i].Revision > owned[j].Revision })
	var rev revisions
	for _, cr := range owned {
		if t := templateOf(cr); t != nil && apiequality.Semantic.DeepEqual(*t, ds.Spec.Template) {
			rev.update = hashOf(cr)
			break
		}
	}
	if rev.update == "" {
		rev.update = workloadrevisions.TemplateHash(&ds.Spec.Template, ds.Status.CollisionCount)
	}
	for _, cr := range owned {
		if h := hashOf(cr); h != rev.update {
			rev.previous = h
			break
		}
	}
	return rev
}

// templateOf decodes the pod template a DaemonSet's ControllerRevision
// holds (a patch that replaces spec.template), nil when it holds none.
func templateOf(cr *appsv1.ControllerRevision) *corev1.PodTemplateSpec {
	var data struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if len(cr.Data.Raw) == 0 || json.Unmarshal(cr.Data.Raw, &data) != nil {
		return nil
	}
	return data.Spec.Template
}

// hashOf is the controller-revision-hash of a ControllerRevision: its label,
// which the DaemonSet controller sets to the name when it is missing.
func hashOf(cr *appsv1.ControllerRevision) string {
	if h := cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; h != "" {
		return h
	}
	return cr.Name
}
