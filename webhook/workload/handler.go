// Package workload holds the mutating admission webhook that holds workload
// updates for an active Rollout, so that the Rollout controller can release
// the new revision in steps.
package workload

import (
	"context"
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/support"
)

// DeploymentPath is where the Deployment webhook is served.
const DeploymentPath = "/mutate-apps-v1-deployment"

// RolloutIndex is the field index (registered by the Rollout controller)
// that finds Rollouts by "<Kind>/<name>" of their workload.
const RolloutIndex = "spec.workloadRef"

// DeploymentHandler holds Deployment updates for active Rollouts.
type DeploymentHandler struct {
	// Client lists Rollouts (from the cache, through RolloutIndex).
	Client client.Reader
	// Decoder decodes admission objects.
	Decoder admission.Decoder
}

var _ admission.Handler = (*DeploymentHandler)(nil)

// Handle implements admission.Handler.
func (h *DeploymentHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update || req.SubResource != "" {
		return admission.Allowed("not an update of the Deployment itself")
	}
	if fieldManagerOf(req) == rolloutsv1beta1.FieldManager {
		return admission.Allowed("sluice's own write")
	}
	old, updated := &appsv1.Deployment{}, &appsv1.Deployment{}
	if err := h.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if err := h.Decoder.DecodeRaw(req.Object, updated); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	ro, err := h.activeRollout(ctx, updated.Namespace, "apps", "Deployment", updated.Name)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if ro == nil {
		return admission.Allowed("no active Rollout for this Deployment")
	}
	if len(updated.UID) == 0 {
		updated.UID = old.UID // some CD tools send updates without a uid
	}
	changed, why := holdDeployment(old, updated, ro.Name)
	if !changed {
		return admission.Allowed(why)
	}
	log.FromContext(ctx).Info("Holding Deployment update", "deployment", req.Namespace+"/"+req.Name, "rollout", ro.Name, "why", why)
	raw, err := json.Marshal(updated)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// activeRollout finds the active Rollout of a workload, or nil.
func (h *DeploymentHandler) activeRollout(ctx context.Context, namespace, group, kind, name string) (*rolloutsv1beta1.Rollout, error) {
	list := &rolloutsv1beta1.RolloutList{}
	if err := h.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{RolloutIndex: kind + "/" + name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		ro := &list.Items[i]
		gv, err := schema.ParseGroupVersion(ro.Spec.WorkloadRef.APIVersion)
		if err != nil || gv.Group != group {
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
