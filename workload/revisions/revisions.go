// Package revisions reads the revisions a workload keeps of its pod
// template: the ReplicaSets of a Deployment, the ControllerRevisions of
// StatefulSets, DaemonSets, OpenKruise workloads and StatefulSet-like
// kinds. Rolling a release back to its stable revision (kubectl sluice
// rollback, the GitOps gate's rollback label) finds the stable revision's
// template among them with Find and sets the workload's template to it;
// the plugin's history lists them. List and TemplateOf read them from the
// API server; everything else is pure.
package revisions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations that identify a revision.
const (
	// podTemplateHashLabel is the revision of a ReplicaSet and its pods.
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey
	// controllerRevisionHashLabel is the revision of a pod of a
	// StatefulSet-like kind or a DaemonSet.
	controllerRevisionHashLabel = appsv1.ControllerRevisionHashLabelKey
	// hashLabel is the hash a StatefulSet gives its ControllerRevisions.
	hashLabel = "controller.kubernetes.io/hash"
	// deploymentRevisionAnnotation numbers a Deployment's ReplicaSets.
	deploymentRevisionAnnotation = "deployment.kubernetes.io/revision"
)

// Revision is one pod template a workload keeps.
type Revision struct {
	// Kind is ReplicaSet or ControllerRevision.
	Kind string
	// Name is the object's name.
	Name string
	// Hash is the revision label value its pods carry (pod-template-hash,
	// or the controller-revision-hash label of the ControllerRevision).
	Hash string
	// Number is the workload's revision number: the ReplicaSet's
	// deployment.kubernetes.io/revision or the ControllerRevision's
	// revision; 0 when unknown.
	Number int64
	// Created is when the object was created.
	Created time.Time
	// Template is the pod template, without the pod-template-hash label;
	// nil when the object holds none that can be read.
	Template *corev1.PodTemplateSpec
}

// FromReplicaSets returns the revisions of the Deployment uid among sets,
// by revision number.
func FromReplicaSets(uid types.UID, sets []appsv1.ReplicaSet) []Revision {
	var out []Revision
	for i := range sets {
		rs := &sets[i]
		if !controlledBy(rs.OwnerReferences, uid) || rs.DeletionTimestamp != nil {
			continue
		}
		tpl := rs.Spec.Template.DeepCopy()
		delete(tpl.Labels, podTemplateHashLabel)
		if len(tpl.Labels) == 0 {
			tpl.Labels = nil
		}
		n, _ := strconv.ParseInt(rs.Annotations[deploymentRevisionAnnotation], 10, 64)
		out = append(out, Revision{
			Kind: "ReplicaSet", Name: rs.Name, Hash: rs.Labels[podTemplateHashLabel], Number: n,
			Created: rs.CreationTimestamp.Time, Template: tpl,
		})
	}
	sortByNumber(out)
	return out
}

// FromControllerRevisions returns the revisions of the workload uid among
// crs, by revision number.
func FromControllerRevisions(uid types.UID, crs []appsv1.ControllerRevision) []Revision {
	var out []Revision
	for i := range crs {
		cr := &crs[i]
		if !controlledBy(cr.OwnerReferences, uid) || cr.DeletionTimestamp != nil {
			continue
		}
		hash := cr.Labels[controllerRevisionHashLabel]
		if hash == "" {
			hash = cr.Labels[hashLabel]
		}
		out = append(out, Revision{
			Kind: "ControllerRevision", Name: cr.Name, Hash: hash, Number: cr.Revision,
			Created: cr.CreationTimestamp.Time, Template: templateOf(cr.Data.Raw),
		})
	}
	sortByNumber(out)
	return out
}

func controlledBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

func sortByNumber(revs []Revision) {
	sort.SliceStable(revs, func(i, j int) bool {
		if revs[i].Number != revs[j].Number {
			return revs[i].Number < revs[j].Number
		}
		return revs[i].Created.Before(revs[j].Created)
	})
}

// templateOf decodes the pod template a ControllerRevision holds: a patch
// that replaces spec.template (what StatefulSets, DaemonSets and the
// OpenKruise workloads write), nil when it holds none.
func templateOf(raw []byte) *corev1.PodTemplateSpec {
	var data struct {
		Spec struct {
			Template json.RawMessage `json:"template"`
		} `json:"spec"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &data) != nil || len(data.Spec.Template) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data.Spec.Template, &fields) != nil {
		return nil
	}
	delete(fields, "$patch") // the strategic merge directive, not a template field
	b, err := json.Marshal(fields)
	if err != nil {
		return nil
	}
	tpl := &corev1.PodTemplateSpec{}
	if json.Unmarshal(b, tpl) != nil {
		return nil
	}
	return tpl
}

// Matches reports whether r is the revision that a Rollout's status names
// revision: its hash, its name, or the hash suffix of its name (a
// CloneSet's pods carry only the suffix).
func (r Revision) Matches(revision string) bool {
	return revision != "" && (r.Hash == revision || r.Name == revision || strings.HasSuffix(r.Name, "-"+revision))
}

// Find returns the revision among revs that matches revision.
func Find(revs []Revision, revision string) (Revision, bool) {
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Matches(revision) {
			return revs[i], true
		}
	}
	return Revision{}, false
}

// Images lists the images of a pod template as name=image, containers
// first, then init containers.
func Images(tpl *corev1.PodTemplateSpec) string {
	if tpl == nil {
		return "-"
	}
	var parts []string
	for _, c := range tpl.Spec.Containers {
		parts = append(parts, c.Name+"="+c.Image)
	}
	for _, c := range tpl.Spec.InitContainers {
		parts = append(parts, "init:"+c.Name+"="+c.Image)
	}
	return strings.Join(parts, ",")
}

// Equal reports whether two pod templates are the same revision: equal but
// for the pod-template-hash label.
func Equal(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	for _, t := range []*corev1.PodTemplateSpec{a, b} {
		delete(t.Labels, podTemplateHashLabel)
		if len(t.Labels) == 0 {
			t.Labels = nil
		}
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// Changes describes, one line each, what setting the pod template from to
// to changes: container images, containers added or removed, other
// container fields, other template fields. It is empty when the templates
// are Equal.
func Changes(from, to *corev1.PodTemplateSpec) []string {
	if Equal(from, to) {
		return nil
	}
	var out []string
	out = append(out, containerChanges("container", from.Spec.Containers, to.Spec.Containers)...)
	out = append(out, containerChanges("init container", from.Spec.InitContainers, to.Spec.InitContainers)...)
	if !sameButImages(from.Spec.Containers, to.Spec.Containers) || !sameButImages(from.Spec.InitContainers, to.Spec.InitContainers) {
		out = append(out, "other container fields (command, env, ports, resources, ...) set back too")
	}
	rest := from.DeepCopy()
	rest.Spec.Containers, rest.Spec.InitContainers = to.Spec.Containers, to.Spec.InitContainers
	if !Equal(rest, to) {
		out = append(out, "other pod template fields (labels, annotations, pod spec) set back too")
	}
	return out
}

func containerChanges(what string, from, to []corev1.Container) []string {
	var out []string
	old := map[string]string{}
	for _, c := range from {
		old[c.Name] = c.Image
	}
	kept := map[string]bool{}
	for _, c := range to {
		kept[c.Name] = true
		img, ok := old[c.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s: added back, image %s", what, c.Name, c.Image))
		case img != c.Image:
			out = append(out, fmt.Sprintf("%s %s: image %s -> %s", what, c.Name, img, c.Image))
		}
	}
	for _, c := range from {
		if !kept[c.Name] {
			out = append(out, fmt.Sprintf("%s %s: removed (image %s)", what, c.Name, c.Image))
		}
	}
	return out
}

// sameButImages reports whether the containers that from and to both
// have, by name, differ in nothing but their image.
func sameButImages(from, to []corev1.Container) bool {
	byName := map[string]corev1.Container{}
	for _, c := range to {
		byName[c.Name] = c
	}
	for _, c := range from {
		t, ok := byName[c.Name]
		if !ok {
			continue
		}
		c.Image = t.Image
		if !apiequality.Semantic.DeepEqual(c, t) {
			return false
		}
	}
	return true
}
