package rollout

import (
	"encoding/json"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

// stampApproval makes sluice.dev/approve-context describe the latest write of
// sluice.dev/approve: when the approval changed, it records user, now and
// the revision being released (from the stored status); otherwise it keeps
// the stored context, so nobody can forge one. It reports whether ro
// changed.
func stampApproval(old, ro *rolloutsv1beta1.Rollout, user string, now time.Time) bool {
	value, has := ro.Annotations[rolloutsv1beta1.ApproveAnnotation]
	oldValue, oldHas := old.Annotations[rolloutsv1beta1.ApproveAnnotation]
	current, hasContext := ro.Annotations[rolloutsv1beta1.ApproveContextAnnotation]
	oldContext, oldHasContext := old.Annotations[rolloutsv1beta1.ApproveContextAnnotation]
	var want string
	var keep bool
	switch {
	case !has:
		keep = false
	case has && (!oldHas || value != oldValue):
		c := approval.Context{By: user, At: now.UTC().Truncate(time.Second)}
		if cs := old.Status.CanaryStatus; cs != nil && old.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing {
			c.Revision = cs.CanaryRevision
		}
		want, keep = approval.EncodeContext(c), true
	default:
		want, keep = oldContext, oldHasContext
	}
	if keep == hasContext && want == current {
		return false
	}
	if !keep {
		delete(ro.Annotations, rolloutsv1beta1.ApproveContextAnnotation)
		return true
	}
	if ro.Annotations == nil {
		ro.Annotations = map[string]string{}
	}
	ro.Annotations[rolloutsv1beta1.ApproveContextAnnotation] = want
	return true
}

func patchResponse(req admission.Request, obj any) admission.Response {
	raw, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
