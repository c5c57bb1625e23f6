package rollout

import (
	"encoding/json"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/progress"
)

// request is one of the annotations through which people ask sluice for
// something, with the context annotation the webhook keeps beside it.
type request struct {
	// key and contextKey are the annotation and its context.
	key, contextKey string
	// revision is the revision a value that names none is pinned to, given
	// the stored Rollout.
	revision func(old *rolloutsv1beta1.Rollout) string
	// precision is what the time recorded is truncated to: whole seconds
	// for an approval (compared with label times, which have them), the
	// microsecond for an abort and a retry, which are ordered against each
	// other.
	precision time.Duration
}

// requests are the annotations the webhook stamps: an approval and an
// abort pin to the revision being released, a retry to the aborted one.
func requests() []request {
	return []request{
		{rolloutsv1beta1.ApproveAnnotation, rolloutsv1beta1.ApproveContextAnnotation, releasing, time.Second},
		{rolloutsv1beta1.AbortAnnotation, rolloutsv1beta1.AbortContextAnnotation, releasing, time.Microsecond},
		{rolloutsv1beta1.RetryAnnotation, rolloutsv1beta1.RetryContextAnnotation, aborted, time.Microsecond},
	}
}

// releasing is the canary revision of the release in progress (or aborted)
// of old; empty when there is none.
func releasing(old *rolloutsv1beta1.Rollout) string {
	st := old.Status
	if st.Phase != rolloutsv1beta1.RolloutPhaseProgressing && st.Phase != rolloutsv1beta1.RolloutPhaseAborted {
		return ""
	}
	p, _ := progress.Of(old)
	return p.Revision
}

// aborted is the revision whose release old holds aborted; empty when none.
func aborted(old *rolloutsv1beta1.Rollout) string {
	if old.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted || old.Status.Aborted == nil {
		return ""
	}
	return old.Status.Aborted.Revision
}

// stamp makes the context annotation of q describe the latest write of its
// annotation: when the value changed, it records user, now and the
// revision to pin it to (from the stored Rollout); otherwise it keeps the
// stored context, so nobody can forge one. It reports whether ro changed.
func stamp(q request, old, ro *rolloutsv1beta1.Rollout, user string, now time.Time) bool {
	value, has := ro.Annotations[q.key]
	oldValue, oldHas := old.Annotations[q.key]
	current, hasContext := ro.Annotations[q.contextKey]
	oldContext, oldHasContext := old.Annotations[q.contextKey]
	var want string
	var keep bool
	switch {
	case !has:
		keep = false
	case !oldHas || value != oldValue:
		c := approval.Context{By: user, At: now.UTC().Truncate(q.precision), Revision: q.revision(old)}
		want, keep = approval.EncodeContext(c), true
	default:
		want, keep = oldContext, oldHasContext
	}
	if keep == hasContext && want == current {
		return false
	}
	if !keep {
		delete(ro.Annotations, q.contextKey)
		return true
	}
	if ro.Annotations == nil {
		ro.Annotations = map[string]string{}
	}
	ro.Annotations[q.contextKey] = want
	return true
}

func patchResponse(req admission.Request, obj any) admission.Response {
	raw, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
