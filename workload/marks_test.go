package workload

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestInProgressRollout(t *testing.T) {
	for raw, want := range map[string]string{`{"rolloutName":"db"}`: "db", "  db": "db", "": ""} {
		if got := InProgressRollout(map[string]string{rolloutsv1beta1.InProgressingAnnotation: raw}); got != want {
			t.Errorf("InProgressRollout(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := InProgressRollout(map[string]string{rolloutsv1beta1.InProgressingAnnotation: InProgressing("web")}); got != "web" {
		t.Errorf("InProgressRollout(InProgressing(web)) = %q", got)
	}
}

// A claim writes only what the workload lacks, and asks for the restore
// patch and the stable revision only then.
func TestClaimMetadata(t *testing.T) {
	owner := Owner{BatchRelease: "web", Rollout: "web"}
	calls := 0
	restore := func() (string, error) { calls++; return `{"spec":{}}`, nil }
	stable := func() (string, error) { calls++; return "abc", nil }

	fresh := &metav1.ObjectMeta{}
	annotations, labels, err := ClaimMetadata(fresh, owner, restore, stable)
	if err != nil || calls != 2 || annotations[rolloutsv1beta1.DeploymentOriginalAnnotation] != `{"spec":{}}` ||
		annotations[rolloutsv1beta1.ControlInfoAnnotation] == nil || labels[rolloutsv1beta1.StableRevisionLabel] != "abc" {
		t.Fatalf("ClaimMetadata(unclaimed) = %v, %v, %v after %d calls", annotations, labels, err, calls)
	}

	claimed := &metav1.ObjectMeta{Labels: map[string]string{rolloutsv1beta1.StableRevisionLabel: "abc"}, Annotations: map[string]string{}}
	for k, v := range annotations {
		claimed.Annotations[k] = v.(string)
	}
	calls = 0
	annotations, labels, err = ClaimMetadata(claimed, owner, restore, stable)
	if err != nil || calls != 0 || len(annotations) != 0 || len(labels) != 0 {
		t.Fatalf("ClaimMetadata(claimed) = %v, %v, %v after %d calls; want nothing to write", annotations, labels, err, calls)
	}
}

type thing struct {
	Spec struct {
		Paused bool `json:"paused"`
	} `json:"spec"`
}

// A typed hold sees decoded objects, and its change reaches the update.
func TestTypedHold(t *testing.T) {
	hold := TypedHold("Thing", func(_, updated *thing, rollout string) (bool, string) {
		updated.Spec.Paused = true
		return true, "held for " + rollout
	})
	old := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	updated := old.DeepCopy()
	changed, why, err := hold(old, updated, "web")
	if err != nil || !changed || why != "held for web" {
		t.Fatalf("hold() = %v, %q, %v", changed, why, err)
	}
	if paused, _, _ := unstructured.NestedBool(updated.Object, "spec", "paused"); !paused {
		t.Fatalf("updated %v, want spec.paused", updated.Object)
	}
	if _, _, err := hold(&unstructured.Unstructured{Object: map[string]any{"spec": "x"}}, updated, "web"); err == nil {
		t.Fatal("hold() of an undecodable object: no error")
	}
}
