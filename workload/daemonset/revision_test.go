package daemonset

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workloadrevisions "github.com/sluice-dev/sluice/workload/revisions"
)

// template is a pod template of image as the API server stores it, with
// its defaults.
func template(image string) corev1.PodTemplateSpec {
	grace := int64(30)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways,
			SchedulerName: "default-scheduler", SecurityContext: &corev1.PodSecurityContext{},
			TerminationGracePeriodSeconds: &grace,
		},
	}
}

// history builds the ControllerRevision the DaemonSet controller writes for
// a template, with the revision number n.
func history(ds *appsv1.DaemonSet, tpl corev1.PodTemplateSpec, hash string, n int64) appsv1.ControllerRevision {
	raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": tpl}})
	return appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            ds.Name + "-" + hash,
			Labels:          map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hash},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
		},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: n,
	}
}

// TestTemplateHash pins the hash to what the DaemonSet controller of the
// local control plane (Kubernetes v1.37) named these revisions.
func TestTemplateHash(t *testing.T) {
	for image, want := range map[string]string{
		"registry.example/a:v1": "7bf4fcb7f4",
		"registry.example/a:v2": "57864f86f5",
	} {
		tpl := template(image)
		if got := workloadrevisions.TemplateHash(&tpl, nil); got != want {
			t.Errorf("workloadrevisions.TemplateHash(%s) = %s, want %s", image, got, want)
		}
	}
	tpl := template("registry.example/a:v1")
	if workloadrevisions.TemplateHash(&tpl, new(int32)) == workloadrevisions.TemplateHash(&tpl, nil) {
		t.Error("a collision count does not change the hash")
	}
}

func TestRevisionsOf(t *testing.T) {
	ds := func(image string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", UID: "ds-uid"},
			Spec:       appsv1.DaemonSetSpec{Template: template(image)},
		}
	}
	v1, v2, v3 := "registry.example/a:v1", "registry.example/a:v2", "registry.example/a:v3"
	d := ds(v2)
	stranger := history(d, template(v3), "stranger", 9)
	stranger.OwnerReferences[0].UID = "other"
	tests := []struct {
		name    string
		ds      *appsv1.DaemonSet
		history []appsv1.ControllerRevision
		want    revisions
	}{
		{
			name:    "newest revision matches the template",
			ds:      ds(v2),
			history: []appsv1.ControllerRevision{history(d, template(v1), "h1", 1), history(d, template(v2), "h2", 2)},
			want:    revisions{update: "h2", previous: "h1"},
		},
		{
			name:    "template not written yet: the hash the controller will give it",
			ds:      ds(v2),
			history: []appsv1.ControllerRevision{history(d, template(v1), "h1", 1)},
			want:    revisions{update: "57864f86f5", previous: "h1"},
		},
		{
			name:    "template back to an old revision reuses its hash",
			ds:      ds(v1),
			history: []appsv1.ControllerRevision{history(d, template(v1), "h1", 3), history(d, template(v2), "h2", 2)},
			want:    revisions{update: "h1", previous: "h2"},
		},
		{
			name:    "template back, before the controller renumbered it",
			ds:      ds(v1),
			history: []appsv1.ControllerRevision{history(d, template(v1), "h1", 1), history(d, template(v2), "h2", 2)},
			want:    revisions{update: "h1", previous: "h2"},
		},
		{
			name:    "revisions of another DaemonSet are ignored",
			ds:      ds(v3),
			history: []appsv1.ControllerRevision{stranger, history(d, template(v1), "h1", 1)},
			want:    revisions{update: workloadrevisions.TemplateHash(ptrTo(template(v3)), nil), previous: "h1"},
		},
		{
			name:    "first revision",
			ds:      ds(v1),
			history: []appsv1.ControllerRevision{history(d, template(v1), "h1", 1)},
			want:    revisions{update: "h1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := revisionsOf(tt.ds, tt.history); got != tt.want {
				t.Fatalf("revisionsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
