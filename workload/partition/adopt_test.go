package partition

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The partition recorded for a workload sluice claims without a restore
// patch: the user's own, but never one a release left (OpenKruise's,
// mid-release) or the hold value.
func TestUserPartition(t *testing.T) {
	p := testStatefulSet.p
	r := &Releaser{p: p}
	marked := func(u *unstructured.Unstructured, key string) *unstructured.Unstructured {
		u.SetAnnotations(map[string]string{key: `{"rolloutName":"db"}`})
		return u
	}
	tests := []struct {
		name string
		u    *unstructured.Unstructured
		want any // the partition recorded; nil for none
		left bool
	}{
		{"the user's own partition", sts("v2", int64(2)), int64(2), false},
		{"the hold value", sts("v2", p.hold), nil, false},
		{"left by OpenKruise mid-release (in-progressing)", marked(sts("v2", int64(3)), rolloutsv1beta1.InProgressingAnnotation), nil, true},
		{"left by OpenKruise mid-release (control-info)", marked(sts("v2", int64(3)), rolloutsv1beta1.ControlInfoAnnotation), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := object{p: p, u: tt.u}
			if got := leftByOther(o); got != tt.left {
				t.Fatalf("leftByOther = %v, want %v", got, tt.left)
			}
			v, found, _ := unstructured.NestedFieldNoCopy(r.userPartition(o), p.partition...)
			if (tt.want == nil && found && v != nil) || (tt.want != nil && v != tt.want) {
				t.Fatalf("recorded partition %v, want %v", v, tt.want)
			}
		})
	}
	claimed := marked(sts("v2", int64(3)), rolloutsv1beta1.InProgressingAnnotation)
	claimed.SetAnnotations(map[string]string{rolloutsv1beta1.InProgressingAnnotation: "{}", restoreAnnotation: "{}"})
	if leftByOther(object{p: p, u: claimed}) {
		t.Fatal("a workload sluice claimed is taken for one a release left")
	}
}
