package revisions

import (
	"encoding/json"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const owner = types.UID("owner-uid")

func ptr[T any](v T) *T { return &v }

func template(images ...string) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	for i, img := range images {
		t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: []string{"app", "sidecar"}[i], Image: img})
	}
	return t
}

func controlled(uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{UID: uid, Controller: ptr(true), Kind: "Owner", Name: "web"}}
}

func replicaSet(name, hash, number string, uid types.UID, images ...string) appsv1.ReplicaSet {
	tpl := template(images...)
	tpl.Labels[podTemplateHashLabel] = hash
	return appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"app": "web", podTemplateHashLabel: hash},
			Annotations: map[string]string{deploymentRevisionAnnotation: number}, OwnerReferences: controlled(uid),
		},
		Spec: appsv1.ReplicaSetSpec{Template: tpl},
	}
}

func TestFromReplicaSets_ownedByRevisionWithoutTheHashLabel(t *testing.T) {
	sets := []appsv1.ReplicaSet{
		replicaSet("web-h2", "h2", "2", owner, "v2"),
		replicaSet("web-h1", "h1", "1", owner, "v1"),
		replicaSet("other-h9", "h9", "9", "someone-else", "v9"),
	}
	got := FromReplicaSets(owner, sets)
	if len(got) != 2 || got[0].Name != "web-h1" || got[1].Name != "web-h2" || got[0].Number != 1 || got[1].Hash != "h2" {
		t.Fatalf("FromReplicaSets = %+v, want web-h1 (#1) then web-h2 (#2)", got)
	}
	if _, ok := got[0].Template.Labels[podTemplateHashLabel]; ok {
		t.Fatalf("the template keeps the %s label: %v", podTemplateHashLabel, got[0].Template.Labels)
	}
	if Images(got[0].Template) != "app=v1" {
		t.Fatalf("Images = %q", Images(got[0].Template))
	}
	if sets[0].Spec.Template.Labels[podTemplateHashLabel] != "h2" {
		t.Fatal("FromReplicaSets changed the ReplicaSet it read")
	}
}

// controllerRevision stores tpl the way the StatefulSet and DaemonSet
// controllers do: a strategic merge patch replacing spec.template.
func controllerRevision(t *testing.T, name string, labels map[string]string, number int64, tpl corev1.PodTemplateSpec) appsv1.ControllerRevision {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tpl)
	if err != nil {
		t.Fatal(err)
	}
	raw["$patch"] = "replace"
	b, err := json.Marshal(map[string]any{"spec": map[string]any{"template": raw}})
	if err != nil {
		t.Fatal(err)
	}
	return appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: controlled(owner)},
		Data:       runtime.RawExtension{Raw: b},
		Revision:   number,
	}
}

func TestFromControllerRevisions_decodesTheTemplate(t *testing.T) {
	crs := []appsv1.ControllerRevision{
		controllerRevision(t, "web-7f9c", map[string]string{hashLabel: "7f9c"}, 2, template("v2")),
		controllerRevision(t, "web-5d8b", map[string]string{controllerRevisionHashLabel: "5d8b"}, 1, template("v1")),
		{ObjectMeta: metav1.ObjectMeta{Name: "web-bad", OwnerReferences: controlled(owner)}, Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}, Revision: 3},
	}
	got := FromControllerRevisions(owner, crs)
	if len(got) != 3 || got[0].Name != "web-5d8b" || got[0].Hash != "5d8b" || got[1].Hash != "7f9c" {
		t.Fatalf("FromControllerRevisions = %+v", got)
	}
	want := template("v1")
	if !reflect.DeepEqual(got[0].Template, &want) {
		t.Fatalf("template = %+v, want %+v", got[0].Template, want)
	}
	if got[2].Template != nil || Images(got[2].Template) != "-" {
		t.Fatalf("a revision without a template: %+v", got[2])
	}
}

func TestFind_matchesHashNameOrHashSuffix(t *testing.T) {
	revs := []Revision{
		{Name: "web-5d8b", Hash: "5d8b", Number: 1}, // a DaemonSet's: the label is the hash
		{Name: "db-6c7d8", Hash: "6c7d8", Number: 2},
		{Name: "cache-4f5g6", Number: 3}, // a CloneSet's pods carry only the suffix
	}
	tests := []struct {
		revision string
		want     string
		wantOK   bool
	}{
		{revision: "5d8b", want: "web-5d8b", wantOK: true},
		{revision: "db-6c7d8", want: "db-6c7d8", wantOK: true}, // a StatefulSet's pods carry the name
		{revision: "4f5g6", want: "cache-4f5g6", wantOK: true},
		{revision: "d8b"},
		{revision: ""},
	}
	for _, tt := range tests {
		t.Run(tt.revision, func(t *testing.T) {
			got, ok := Find(revs, tt.revision)
			if ok != tt.wantOK || got.Name != tt.want {
				t.Fatalf("Find(%q) = %q, %v; want %q, %v", tt.revision, got.Name, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	withEnv := template("v1")
	withEnv.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	annotated := template("v2")
	annotated.Annotations = map[string]string{"restarted": "now"}
	hashed := template("v1")
	hashed.Labels[podTemplateHashLabel] = "h1"
	tests := []struct {
		name     string
		from, to corev1.PodTemplateSpec
		want     []string
	}{
		{name: "same but for the hash label", from: template("v1"), to: hashed},
		{name: "image", from: template("v2"), to: template("v1"), want: []string{"container app: image v2 -> v1"}},
		{name: "container removed and image", from: template("v2", "s2"), to: template("v1"), want: []string{
			"container app: image v2 -> v1", "container sidecar: removed (image s2)",
		}},
		{name: "container added back", from: template("v1"), to: template("v1", "s1"), want: []string{"container sidecar: added back, image s1"}},
		{name: "env only", from: withEnv, to: template("v1"), want: []string{
			"other container fields (command, env, ports, resources, ...) set back too",
		}},
		{name: "annotation and image", from: annotated, to: template("v1"), want: []string{
			"container app: image v2 -> v1", "other pod template fields (labels, annotations, pod spec) set back too",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Changes(&tt.from, &tt.to)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Changes = %q, want %q", got, tt.want)
			}
		})
	}
}
