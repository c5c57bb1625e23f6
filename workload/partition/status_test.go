package partition

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// withStatus gives u a generation and status.
func withStatus(u *unstructured.Unstructured, generation int64, status map[string]any) *unstructured.Unstructured {
	u.SetGeneration(generation)
	u.Object["status"] = status
	return u
}

// marked gives u the mark of a release held for Rollout db.
func marked(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetAnnotations(map[string]string{rolloutsv1beta1.InProgressingAnnotation: `{"rolloutName":"db"}`})
	return u
}

func TestStatusOf(t *testing.T) {
	stsProfile := testStatefulSet.p
	csProfile := testCloneSet.p
	dsProfile := testAdvancedDaemonSet.p
	atRest := map[string]any{"observedGeneration": int64(1), "replicas": int64(4), "updatedReplicas": int64(4),
		"currentRevision": "db-1", "updateRevision": "db-1"}
	midRelease := map[string]any{"observedGeneration": int64(3), "replicas": int64(4), "updatedReplicas": int64(1),
		"currentRevision": "db-1", "updateRevision": "db-2"}
	rolledBack := map[string]any{"observedGeneration": int64(4), "replicas": int64(4), "updatedReplicas": int64(3),
		"currentRevision": "db-1", "updateRevision": "db-1"}
	tests := []struct {
		name                string
		o                   object
		pods                podView
		wantStable          string
		wantUpdate          string
		wantUpdatedReady    int32
		wantUpToDate        bool
		wantSettled         bool
		wantRollback        bool
		wantUnsupported     bool
		wantMaxUnavailable  int32
		wantInProgressRoute string
	}{
		{
			name: "StatefulSet at rest is up to date, ready pods counted from pods",
			o:    object{p: stsProfile, u: withStatus(sts("v1", int64(0)), 1, atRest)}, pods: podView{updatedReady: 4},
			wantUpdate: "db-1", wantUpdatedReady: 4, wantUpToDate: true, wantSettled: true, wantMaxUnavailable: 1,
		},
		{
			name: "StatefulSet held mid-release is not up to date and names the stable revision",
			o:    object{p: stsProfile, u: withStatus(atStep(heldSTS("v2", restoreZero), 3), 3, midRelease)}, pods: podView{updatedReady: 1},
			wantStable: "db-1", wantUpdate: "db-2", wantUpdatedReady: 1, wantSettled: true, wantMaxUnavailable: 1,
			wantInProgressRoute: "db",
		},
		{
			name:       "template back to the stable revision is a rollback",
			o:          object{p: stsProfile, u: withStatus(heldSTS("v1", restoreZero), 4, rolledBack)},
			wantStable: "db-1", wantUpdate: "db-1", wantSettled: true, wantRollback: true, wantMaxUnavailable: 1,
			wantInProgressRoute: "db",
		},
		{
			name:       "a status the controller has not caught up with is neither settled nor a rollback",
			o:          object{p: stsProfile, u: withStatus(heldSTS("v1", restoreZero), 5, rolledBack)},
			wantStable: "db-1", wantUpdate: "db-1", wantMaxUnavailable: 1, wantInProgressRoute: "db",
		},
		{
			name: "a user's partition counts: up to date once the pods above it are updated",
			o: object{p: stsProfile, u: withStatus(sts("v2", int64(2)), 3, map[string]any{"observedGeneration": int64(3), "replicas": int64(4),
				"updatedReplicas": int64(2), "currentRevision": "db-1", "updateRevision": "db-2"})}, pods: podView{updatedReady: 2},
			wantStable: "db-1", wantUpdate: "db-2", wantUpdatedReady: 2, wantUpToDate: true, wantSettled: true, wantMaxUnavailable: 1,
		},
		{
			name: "OnDelete is unsupported",
			o: object{p: stsProfile, u: func() *unstructured.Unstructured {
				u := withStatus(sts("v1", nil), 1, atRest)
				_ = unstructured.SetNestedField(u.Object, "OnDelete", "spec", "updateStrategy", "type")
				return u
			}()},
			wantUpdate: "db-1", wantSettled: true, wantUnsupported: true, wantMaxUnavailable: 1,
		},
		{
			name: "CloneSet revisions are the hashes its pods carry in pod-template-hash",
			o: object{p: csProfile, u: withStatus(marked(cloneSet("v2", holdPercent)), 2, map[string]any{"observedGeneration": int64(2), "replicas": int64(4),
				"updatedReplicas": int64(0), "updatedReadyReplicas": int64(0), "currentRevision": "db-5f7c9", "updateRevision": "db-8d6b4"})},
			wantStable: "5f7c9", wantUpdate: "8d6b4", wantSettled: true, wantMaxUnavailable: 1, wantInProgressRoute: "db",
		},
		{
			name: "Advanced DaemonSet counts nodes and takes its stable revision from the pods",
			o: object{p: dsProfile, u: withStatus(marked(sts("v2", int64(holdPartition))), 2, map[string]any{"observedGeneration": int64(2),
				"desiredNumberScheduled": int64(3), "currentNumberScheduled": int64(3), "updatedNumberScheduled": int64(0), "daemonSetHash": "7c8d"})},
			pods:       podView{oldRevision: "5b6a"},
			wantStable: "5b6a", wantUpdate: "7c8d", wantSettled: true, wantMaxUnavailable: 1, wantInProgressRoute: "db",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := statusOf(tt.o, tt.pods, "")
			if s.StableRevision != tt.wantStable || s.UpdateRevision != tt.wantUpdate || s.PodTemplateHash != tt.wantUpdate {
				t.Errorf("revisions stable %q update %q hash %q, want %q %q", s.StableRevision, s.UpdateRevision, s.PodTemplateHash, tt.wantStable, tt.wantUpdate)
			}
			if s.UpdatedReadyReplicas != tt.wantUpdatedReady {
				t.Errorf("updated ready %d, want %d", s.UpdatedReadyReplicas, tt.wantUpdatedReady)
			}
			if s.UpToDate != tt.wantUpToDate || s.Settled != tt.wantSettled || s.InRollback != tt.wantRollback {
				t.Errorf("upToDate %v settled %v rollback %v, want %v %v %v", s.UpToDate, s.Settled, s.InRollback, tt.wantUpToDate, tt.wantSettled, tt.wantRollback)
			}
			if (s.Unsupported != "") != tt.wantUnsupported {
				t.Errorf("unsupported %q", s.Unsupported)
			}
			if s.MaxUnavailable != tt.wantMaxUnavailable || s.InProgressRollout != tt.wantInProgressRoute {
				t.Errorf("maxUnavailable %d inProgress %q", s.MaxUnavailable, s.InProgressRollout)
			}
		})
	}
}

func TestPartitionCount(t *testing.T) {
	csProfile := testCloneSet.p
	stsProfile := testStatefulSet.p
	tests := []struct {
		name      string
		o         object
		replicas  int32
		want      int32
		wantError bool
	}{
		{"percentage rounds up", object{p: csProfile, u: cloneSet("v1", "30%")}, 5, 2, false},
		{"100% keeps all", object{p: csProfile, u: cloneSet("v1", holdPercent)}, 5, 5, false},
		{"number", object{p: csProfile, u: cloneSet("v1", int64(3))}, 5, 3, false},
		{"missing keeps none", object{p: csProfile, u: cloneSet("v1", nil)}, 5, 0, false},
		{"StatefulSet hold", object{p: stsProfile, u: sts("v1", int64(holdPartition))}, 5, holdPartition, false},
		{"percentage on a StatefulSet is an error", object{p: stsProfile, u: sts("v1", "50%")}, 5, 0, true},
		{"a string that is not a percentage is an error", object{p: csProfile, u: cloneSet("v1", "3")}, 5, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.partitionCount(tt.replicas)
			if (err != nil) != tt.wantError || got != tt.want {
				t.Fatalf("partitionCount() = %d, %v; want %d, error %v", got, err, tt.want, tt.wantError)
			}
		})
	}
}

func TestViewPods(t *testing.T) {
	pod := func(rev string, ready bool, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{controllerRevisionHashLabel: rev}}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		if deleting {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	pods := []corev1.Pod{pod("new", true, false), pod("new", false, false), pod("new", true, true),
		pod("old", true, false), pod("old", true, false), pod("older", true, false)}
	got := viewPods(pods, controllerRevisionHashLabel, "new")
	if got.updatedReady != 1 || got.oldRevision != "old" {
		t.Fatalf("viewPods() = %+v, want 1 ready updated pod and old revision \"old\"", got)
	}
}
