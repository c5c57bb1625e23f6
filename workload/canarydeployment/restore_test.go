package canarydeployment

import (
	"encoding/json"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/deployment"
)

// The webhook keeps a user's changes of a held Deployment's strategy in the
// restore patch through deployment.MergeUserChanges; the canary style's
// restore patch must survive that unchanged and take the user's values.
func TestRestorePatch_foldsUserChangesLikeTheDeploymentAdapter(t *testing.T) {
	d := stableDeployment()
	b, err := json.Marshal(deployment.NewRestorePatch(d))
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)

	same, err := deployment.MergeUserChanges(raw, d, d.DeepCopy())
	if err != nil || same != raw {
		t.Fatalf("MergeUserChanges without a change: %s, %v; want %s", same, err, raw)
	}

	updated := d.DeepCopy()
	surge := intstr.FromInt32(4)
	updated.Spec.Strategy.RollingUpdate.MaxSurge = &surge
	merged, err := deployment.MergeUserChanges(raw, d, updated)
	if err != nil {
		t.Fatal(err)
	}
	var p deployment.RestorePatch
	if err := json.Unmarshal([]byte(merged), &p); err != nil {
		t.Fatal(err)
	}
	ru := p.Spec.Strategy.RollingUpdate
	if ru.MaxSurge == nil || ru.MaxSurge.String() != "4" || ru.MaxUnavailable == nil || ru.MaxUnavailable.String() != "1" {
		t.Fatalf("merged patch strategy %+v, want maxSurge 4 and maxUnavailable 1", ru)
	}
	if p.Spec.Paused || p.Spec.MinReadySeconds != 5 {
		t.Fatalf("merged patch spec %+v, want unpaused with minReadySeconds 5", p.Spec)
	}
	for _, k := range []string{rolloutsv1beta1.DeploymentOriginalAnnotation, rolloutsv1beta1.InProgressingAnnotation, rolloutsv1beta1.ControlInfoAnnotation} {
		if v, ok := p.Metadata.Annotations[k]; !ok || v != nil {
			t.Errorf("annotation %s: want removed by the patch", k)
		}
	}
	if v, ok := p.Metadata.Labels[rolloutsv1beta1.StableRevisionLabel]; !ok || v != nil {
		t.Errorf("label %s: want removed by the patch", rolloutsv1beta1.StableRevisionLabel)
	}
}

func TestStableRevision(t *testing.T) {
	d := stableDeployment() // template web:v2
	rs := func(hash, image string, replicas int32, revision int, owner types.UID) appsv1.ReplicaSet {
		tpl := d.Spec.Template.DeepCopy()
		tpl.Spec.Containers[0].Image = image
		tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
		yes := true
		return appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{
				Name:            "web-" + hash,
				Labels:          map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash},
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(revision)},
				OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: owner, Controller: &yes}},
			},
			Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: *tpl},
		}
	}
	deleting := rs("gone", "web:v1", 5, 9, d.UID)
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name string
		sets []appsv1.ReplicaSet
		want string
	}{
		{name: "none", want: ""},
		{name: "the active old one", sets: []appsv1.ReplicaSet{rs("v0", "web:v0", 0, 1, d.UID), rs("v1", "web:v1", 10, 2, d.UID)}, want: "v1"},
		{name: "an active one beats a newer idle one", sets: []appsv1.ReplicaSet{rs("v1", "web:v1", 10, 2, d.UID), rs("v0", "web:v0", 0, 3, d.UID)}, want: "v1"},
		{name: "the newest of several active ones", sets: []appsv1.ReplicaSet{rs("v0", "web:v0", 3, 1, d.UID), rs("v1", "web:v1", 7, 2, d.UID)}, want: "v1"},
		{name: "the newest idle one when none is active", sets: []appsv1.ReplicaSet{rs("v0", "web:v0", 0, 1, d.UID), rs("v1", "web:v1", 0, 2, d.UID)}, want: "v1"},
		{name: "never the one of the Deployment's template", sets: []appsv1.ReplicaSet{rs("v2", "web:v2", 10, 3, d.UID), rs("v1", "web:v1", 0, 2, d.UID)}, want: "v1"},
		{name: "never another Deployment's or a deleted one", sets: []appsv1.ReplicaSet{rs("x", "web:v1", 10, 5, "uid-other"), deleting, rs("v1", "web:v1", 10, 2, d.UID)}, want: "v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deployment.StableRevision(d, tt.sets); got != tt.want {
				t.Errorf("StableRevision = %q, want %q", got, tt.want)
			}
		})
	}
}
