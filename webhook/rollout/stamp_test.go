package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/abort"
)

// TestStamp_pinsAbortAndRetryToTheirRevisionsAndWhoWroteThem: a short
// abort value is pinned to the revision being released and stamped with
// the writer; a retry to the aborted revision; an unchanged value keeps
// its stored context, and a forged one is replaced.
func TestStamp_pinsAbortAndRetryToTheirRevisionsAndWhoWroteThem(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	releasingV2 := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: rolloutsv1beta1.RolloutPhaseProgressing,
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{CanaryRevision: "v2"}}}
	abortedV2 := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: rolloutsv1beta1.RolloutPhaseAborted,
		CanaryStatus: &rolloutsv1beta1.CanaryStatus{CanaryRevision: "v2"}, Aborted: &rolloutsv1beta1.AbortStatus{Revision: "v2"}}}
	healthy := &rolloutsv1beta1.Rollout{Status: rolloutsv1beta1.RolloutStatus{Phase: rolloutsv1beta1.RolloutPhaseHealthy}}
	withAnnotations := func(old *rolloutsv1beta1.Rollout, a map[string]string) *rolloutsv1beta1.Rollout {
		ro := old.DeepCopy()
		ro.ObjectMeta = metav1.ObjectMeta{Annotations: a}
		return ro
	}
	tests := []struct {
		name         string
		old          *rolloutsv1beta1.Rollout
		key, context string
		value        string
		wantRevision string
		wantBy       string
	}{
		{"abort true during a release", releasingV2, rolloutsv1beta1.AbortAnnotation, rolloutsv1beta1.AbortContextAnnotation, "true", "v2", "alice"},
		{"abort with no release", healthy, rolloutsv1beta1.AbortAnnotation, rolloutsv1beta1.AbortContextAnnotation, "true", "", "alice"},
		{"retry of an aborted release", abortedV2, rolloutsv1beta1.RetryAnnotation, rolloutsv1beta1.RetryContextAnnotation, "true", "v2", "alice"},
		{"retry with nothing aborted", releasingV2, rolloutsv1beta1.RetryAnnotation, rolloutsv1beta1.RetryContextAnnotation, "true", "", "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := withAnnotations(tt.old, map[string]string{tt.key: tt.value, tt.context: `{"by":"mallory"}`})
			changed := false
			for _, q := range requests() {
				changed = stamp(q, tt.old, ro, "alice", now) || changed
			}
			if !changed {
				t.Fatal("nothing stamped")
			}
			r, err := abort.Resolve(ro.Annotations[tt.key], ro.Annotations[tt.context])
			if err != nil || r.Revision != tt.wantRevision || r.By != tt.wantBy || r.At == nil || !r.At.Equal(now) {
				t.Fatalf("resolved %+v, %v; want revision %q by %s at %s", r, err, tt.wantRevision, tt.wantBy, now)
			}
			// The same value written again keeps its context.
			later := withAnnotations(tt.old, map[string]string{tt.key: tt.value, tt.context: `{"by":"mallory"}`})
			stored := ro.DeepCopy()
			stored.Status = tt.old.Status
			for _, q := range requests() {
				stamp(q, stored, later, "bob", now.Add(time.Hour))
			}
			if later.Annotations[tt.context] != ro.Annotations[tt.context] {
				t.Fatalf("context %s changed to %s on a write that kept the value", ro.Annotations[tt.context], later.Annotations[tt.context])
			}
		})
	}
}
