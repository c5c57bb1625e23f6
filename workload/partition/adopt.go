package partition

import (
	"fmt"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// leftByOther reports whether o carries the marks of a release that
// sluice never claimed: rollouts.kruise.io/in-progressing or a controlling
// BatchRelease, but no restore patch (sluice's webhook and Claim always
// write the restore patch with them). OpenKruise Rollouts leaves a
// workload so when it is replaced in the middle of a release; the
// partition it holds then is OpenKruise's, not the user's.
func leftByOther(o object) bool {
	if _, claimed := restorePatchOf(o.u); claimed {
		return false
	}
	a := o.u.GetAnnotations()
	_, marked := a[rolloutsv1beta1.InProgressingAnnotation]
	_, controlled := a[rolloutsv1beta1.ControlInfoAnnotation]
	return marked || controlled
}

// userPartition is the workload o as its user configured it, for the
// restore patch of a release sluice claims without one: the partition it
// has, unless a release left it there (see leftByOther) or it is the hold
// value, which nobody wants back; then none, as OpenKruise hands it back.
func (r *Releaser) userPartition(o object) map[string]any {
	raw, ok := o.partitionRaw()
	if ok && (leftByOther(o) || fmt.Sprint(raw) == fmt.Sprint(r.p.hold)) {
		return withValue(o.u.Object, r.p.partition, nil, false)
	}
	return o.u.Object
}
