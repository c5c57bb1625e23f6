// Package workload holds the mutating admission webhook that holds workload
// updates for an active Rollout, so that the Rollout controller can release
// the new revision in steps. It serves every workload kind; what holding
// means for a kind is up to that kind's adapter (workload.Hold).
package workload

import (
	"context"
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/support"
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
}

var _ admission.Handler = (*Handler)(nil)

// Handle implements admission.Handler.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update || req.SubResource != "" {
		return admission.Allowed("not an update of the workload itself")
	}
	if fieldManagerOf(req) == rolloutsv1beta1.FieldManager {
		return admission.Allowed("sluice's own write")
	}
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	hold, ok := h.Holds(gk)
	if !ok {
		return admission.Allowed("sluice does not hold " + gk.String())
	}
	old, updated := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	if err := old.UnmarshalJSON(req.OldObject.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if err := updated.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	ro, err := h.activeRollout(ctx, req.Namespace, gk, req.Name)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if ro == nil {
		return admission.Allowed("no active Rollout for this workload")
	}
	if updated.GetUID() == "" {
		updated.SetUID(old.GetUID()) // some CD tools send updates without a uid
	}
	changed, why, err := hold(old, updated, ro.Name)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if !changed {
		return admission.Allowed(why)
	}
	log.FromContext(ctx).Info("Holding workload update", "kind", gk.String(), "workload", req.Namespace+"/"+req.Name, "rollout", ro.Name, "why", why)
	raw, err := json.Marshal(updated.Object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
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
		if support.Active(ro) {
			return ro, nil
		}
	}
	return nil, nil
}

// fieldManagerOf reads the field manager from the request's options.
func fieldManagerOf(req admission.Request) string {
	var opts struct {
		FieldManager string `json:"fieldManager"`
	}
	if len(req.Options.Raw) > 0 {
		_ = json.Unmarshal(req.Options.Raw, &opts)
	}
	return opts.FieldManager
}
