package kinds

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

func TestKeptIn(t *testing.T) {
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		want string
	}{
		{name: "deployment", gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), want: "ReplicaSet"},
		{name: "statefulset", gvk: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), want: "ControllerRevision"},
		{name: "daemonset", gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), want: "ControllerRevision"},
		{name: "cloneset", gvk: schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}, want: "ControllerRevision"},
		{name: "custom kind named Deployment", gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Deployment"}, want: "ControllerRevision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeptIn(tt.gvk); string(got) != tt.want {
				t.Fatalf("KeptIn(%v) = %s, want %s", tt.gvk, got, tt.want)
			}
		})
	}
}

func TestIsCustomCandidate(t *testing.T) {
	tests := []struct {
		gk   schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Group: "games.example.com", Kind: "GameServerSet"}, true},
		{schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}, false},
		{schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}, false},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, false},
		{schema.GroupKind{Group: "", Kind: "Pod"}, false},
	}
	for _, tt := range tests {
		if got := IsCustomCandidate(tt.gk); got != tt.want {
			t.Errorf("IsCustomCandidate(%s) = %v, want %v", tt.gk, got, tt.want)
		}
	}
}

func TestKnownKinds(t *testing.T) {
	want := "apps/Deployment, apps/StatefulSet, apps/DaemonSet, apps.kruise.io/CloneSet, apps.kruise.io/StatefulSet, apps.kruise.io/DaemonSet"
	if got := KnownKinds(); got != want {
		t.Fatalf("KnownKinds() = %q, want %q", got, want)
	}
}

func TestSupported(t *testing.T) {
	ref := func(apiVersion, kind string) rolloutsv1beta1.ObjectRef {
		return rolloutsv1beta1.ObjectRef{APIVersion: apiVersion, Kind: kind, Name: "w"}
	}
	tests := []struct {
		name  string
		ref   rolloutsv1beta1.ObjectRef
		style rolloutsv1beta1.RollingStyleType
		want  bool
	}{
		{"deployment in place", ref("apps/v1", "Deployment"), "", true},
		{"deployment canary", ref("apps/v1", "Deployment"), rolloutsv1beta1.CanaryRollingStyle, true},
		{"deployment blue-green", ref("apps/v1", "Deployment"), rolloutsv1beta1.BlueGreenRollingStyle, true},
		{"cloneset blue-green", ref("apps.kruise.io/v1alpha1", "CloneSet"), rolloutsv1beta1.BlueGreenRollingStyle, true},
		{"cloneset canary", ref("apps.kruise.io/v1alpha1", "CloneSet"), rolloutsv1beta1.CanaryRollingStyle, false},
		{"statefulset blue-green", ref("apps/v1", "StatefulSet"), rolloutsv1beta1.BlueGreenRollingStyle, false},
		{"daemonset partition", ref("apps/v1", "DaemonSet"), rolloutsv1beta1.PartitionRollingStyle, true},
		{"custom kind in place", ref("games.example.com/v1", "GameServerSet"), "", true},
		{"custom kind blue-green", ref("games.example.com/v1", "GameServerSet"), rolloutsv1beta1.BlueGreenRollingStyle, false},
		{"core kind", ref("v1", "Pod"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := Supported(tt.ref, tt.style); got != tt.want {
				t.Fatalf("Supported(%v, %q) = %v (%s), want %v", tt.ref, tt.style, got, why, tt.want)
			}
		})
	}
}

func TestReleasedBlueGreen(t *testing.T) {
	for kind, want := range map[string]bool{"Deployment": true, "CloneSet": true, "StatefulSet": false, "DaemonSet": false} {
		ok, which := ReleasedBlueGreen(kind)
		if ok != want || which != "Deployments and CloneSets" {
			t.Errorf("ReleasedBlueGreen(%s) = %v, %q; want %v, \"Deployments and CloneSets\"", kind, ok, which, want)
		}
	}
}

func TestWorkloadType(t *testing.T) {
	tests := map[rolloutsv1beta1.ObjectRef]string{
		{APIVersion: "apps/v1", Kind: "Deployment"}:                 rolloutsv1beta1.WorkloadTypeDeployment,
		{APIVersion: "apps/v1", Kind: "StatefulSet"}:                rolloutsv1beta1.WorkloadTypeStatefulSet,
		{APIVersion: "apps/v1", Kind: "DaemonSet"}:                  rolloutsv1beta1.WorkloadTypeDaemonSet,
		{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet"}:   rolloutsv1beta1.WorkloadTypeCloneSet,
		{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet"}: rolloutsv1beta1.WorkloadTypeStatefulSet,
		{APIVersion: "apps.kruise.io/v1alpha1", Kind: "DaemonSet"}:  rolloutsv1beta1.WorkloadTypeDaemonSet,
		{APIVersion: "games.example.com/v1", Kind: "GameServerSet"}: rolloutsv1beta1.WorkloadTypeStatefulSet,
	}
	for ref, want := range tests {
		if got := WorkloadType(ref); got != want {
			t.Errorf("WorkloadType(%s/%s) = %s, want %s", ref.APIVersion, ref.Kind, got, want)
		}
	}
}

// The kinds watched from the start are the typed built-in ones; the
// OpenKruise kinds are watched once a Rollout names them. The DaemonSet's
// pods and the Deployment's ReplicaSets are the dependents.
func TestWatched(t *testing.T) {
	var got []string
	for _, k := range Watched() {
		got = append(got, k.GroupKind.String())
	}
	if want := []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps"}; !slices.Equal(got, want) {
		t.Errorf("Watched() = %v, want %v", got, want)
	}
	if WatchedFromStart(schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}) {
		t.Error("CloneSets watched from the start; their CRD may not be installed")
	}
	deps := map[string]string{}
	for _, d := range Dependents() {
		for _, c := range d.Controllers {
			deps[c.String()] = fmt.Sprintf("%T", d.Object())
		}
	}
	if deps["Deployment.apps"] != "*v1.ReplicaSet" || deps["DaemonSet.apps"] != "*v1.Pod" || len(deps) != 2 {
		t.Errorf("Dependents() = %v, want the Deployment's ReplicaSets and the DaemonSet's pods", deps)
	}
}

// TemplateRevision computes from the copy alone what a Deployment's
// Releaser reports as its update revision; the kinds whose controller names
// their revisions have none.
func TestTemplateRevision(t *testing.T) {
	two := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "checkout"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shop/checkout:v2", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}}},
			},
		},
	}
	c := fake.NewClientBuilder().WithObjects(d.DeepCopy()).Build()
	rel, err := New(c, c, workload.Target{Namespace: "shop", Ref: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "checkout"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rel.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, ok := TemplateRevision(schema.GroupKind{Group: "apps", Kind: "Deployment"}, d)
	if !ok || got != st.UpdateRevision || got == "" {
		t.Fatalf("TemplateRevision = %q, %v; the Releaser's update revision is %q", got, ok, st.UpdateRevision)
	}
	for _, gk := range []schema.GroupKind{
		{Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "DaemonSet"}, {Group: "apps.kruise.io", Kind: "CloneSet"},
		{Group: "games.example.com", Kind: "GameServerSet"},
	} {
		if rev, ok := TemplateRevision(gk, &appsv1.StatefulSet{}); ok {
			t.Errorf("TemplateRevision(%v) = %q, want none: its controller names its revisions", gk, rev)
		}
	}
}
