// Package workload holds the mutating admission webhook that holds workload
// updates for an active Rollout, so that the Rollout controller can release
// the new revision in steps. It serves every workload kind; what holding
// means for a kind is up to that kind's adapter (workload.Hold).
package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/workload"
)

// Path is where the workload webhook is served.
const Path = "/mutate-workload"

// RolloutIndex is the field index (registered by the Rollout controller)
// that finds Rollouts by "<Kind>/<name>" of their workload.
const RolloutIndex = "spec.workloadRef"

// Handler holds workload updates for active Rollouts.
type Handler struct {
	// Client lists Rollouts (from the cache, through RolloutIndex).
	Client client.Reader
	// Holds returns how updates of a kind are held.
	Holds func(schema.GroupKind) (workload.Hold, bool)
	// Self is the user sluice authenticates as (from its
	// SelfSubjectReview at start). Only requests of this user can be
	// sluice's own writes; an empty Self recognises none.
	Self string
	// FailurePolicy is the failure policy the webhook is registered with.
	// An update the handler cannot judge (an internal error) follows it,
	// as the API server does when it cannot reach the webhook: Ignore
	// (the default, also when empty) lets it through unheld with a
	// warning, Fail refuses it.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// Errors counts the updates the handler could not judge; nil counts
	// nothing.
	Errors metrics.AdmissionObserver
}

var _ admission.Handler = (*Handler)(nil)

// webhookName names the workload webhook in metrics.
const webhookName = "workload"

// Handle implements admission.Handler.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update || req.SubResource != "" {
		return admission.Allowed("not an update of the workload itself")
	}
	if h.ownWrite(req) {
		return admission.Allowed("sluice's own write")
	}
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	hold, ok := h.Holds(gk)
	if !ok {
		return admission.Allowed("sluice does not hold " + gk.String())
	}
	old, updated := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	if err := old.UnmarshalJSON(req.OldObject.Raw); err != nil {
		return h.internalError(ctx, req, fmt.Errorf("decoding the stored object: %w", err))
	}
	if err := updated.UnmarshalJSON(req.Object.Raw); err != nil {
		return h.internalError(ctx, req, fmt.Errorf("decoding the update: %w", err))
	}
	ro, err := h.activeRollout(ctx, req.Namespace, gk, req.Name)
	if err != nil {
		return h.internalError(ctx, req, fmt.Errorf("finding the Rollout of %s %s: %w", gk, req.Name, err))
	}
	if ro == nil {
		return admission.Allowed("no active Rollout for this workload")
	}
	if updated.GetUID() == "" {
		updated.SetUID(old.GetUID()) // some CD tools send updates without a uid
	}
	changed, why, err := hold(old, updated, ro.Name)
	if err != nil {
		return h.internalError(ctx, req, err)
	}
	if !changed {
		return admission.Allowed(why)
	}
	ctrl.LoggerFrom(ctx).Info("Holding workload update", "kind", gk.String(), "workload", req.Namespace+"/"+req.Name, "rollout", ro.Name, "why", why)
	raw, err := json.Marshal(updated.Object)
	if err != nil {
		return h.internalError(ctx, req, fmt.Errorf("encoding the held update: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// internalError answers an update the handler could not judge the way the
// webhook's failure policy says, as the API server would had the webhook
// not answered: under Fail it is refused with err; under Ignore it goes
// through as sent, unheld, with a warning to the client naming err. Both
// are logged and counted.
func (h *Handler) internalError(ctx context.Context, req admission.Request, err error) admission.Response {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", req.Kind.Kind, "workload", req.Namespace+"/"+req.Name, "user", req.UserInfo.Username)
	if h.FailurePolicy == admissionregistrationv1.Fail {
		log.Error(err, "Refusing a workload update sluice could not judge (failurePolicy Fail)")
		h.countError("denied")
		return admission.Errored(http.StatusInternalServerError,
			fmt.Errorf("sluice could not decide whether to hold this update, and its workload webhook fails closed (failurePolicy Fail): %w", err))
	}
	log.Error(err, "Letting a workload update through unheld: sluice could not judge it (failurePolicy Ignore)")
	h.countError("allowed")
	return admission.Allowed("").WithWarnings(fmt.Sprintf(
		"sluice let this update of %s %s/%s through without holding it for its Rollout (its workload webhook fails open, failurePolicy Ignore): %v",
		req.Kind.Kind, req.Namespace, req.Name, err))
}

func (h *Handler) countError(outcome string) {
	if h.Errors != nil {
		h.Errors.InternalError(webhookName, outcome)
	}
}

// activeRollout finds the active Rollout of a workload, or nil.
func (h *Handler) activeRollout(ctx context.Context, namespace string, gk schema.GroupKind, name string) (*rolloutsv1beta1.Rollout, error) {
	list := &rolloutsv1beta1.RolloutList{}
	if err := h.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{RolloutIndex: gk.Kind + "/" + name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		ro := &list.Items[i]
		gv, err := schema.ParseGroupVersion(ro.Spec.WorkloadRef.APIVersion)
		if err != nil || gv.Group != gk.Group {
			continue
		}
		if coverage.Active(ro) {
			return ro, nil
		}
	}
	return nil, nil
}

// ownWrite reports whether req is sluice's own write, which the hold must
// let through unchanged: a request authenticated as sluice. The API server
// vouches for userInfo; nothing the client chooses (a field manager, a
// user agent) can make a user's request sluice's.
func (h *Handler) ownWrite(req admission.Request) bool {
	return h.Self != "" && req.UserInfo.Username == h.Self
}
