package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// TrafficRouting is a routing of requests shared by several Rollouts, as
// OpenKruise Rollouts v1alpha1 defines it: the Service and routes of
// spec.objectRef. Used alone, sluice makes the routes carry spec.strategy;
// while a Rollout names it (spec.strategy.canary.trafficRoutingRef, or the
// annotation rollouts.kruise.io/trafficrouting) and releases, the Rollout
// drives the same routes through its steps and the TrafficRouting holds
// the finalizer progressing.rollouts.kruise.io/<rollout>.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.phase",description="The TrafficRouting phase."
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",description="What the TrafficRouting is doing or waiting for."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type TrafficRouting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the routing and what it should carry.
	// +required
	Spec TrafficRoutingSpec `json:"spec"`

	// Status is what the controller observed and did.
	// +optional
	Status TrafficRoutingStatus `json:"status,omitempty"`
}

// TrafficRoutingList is a list of TrafficRoutings.
//
// +kubebuilder:object:root=true
type TrafficRoutingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TrafficRoutings.
	Items []TrafficRouting `json:"items"`
}

// TrafficRoutingSpec is the desired routing.
type TrafficRoutingSpec struct {
	// ObjectRef names the stable Service and the routes (Ingress, Gateway
	// API route, custom objects). Only one entry is allowed, as for a
	// Rollout's trafficRoutings.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +kubebuilder:validation:XValidation:rule="self.all(r, has(r.ingress) || has(r.gateway) || has(r.customNetworkRefs))",message="each objectRef entry names an ingress, a gateway or customNetworkRefs"
	ObjectRef []TrafficRoutingRef `json:"objectRef"`

	// Strategy is the share of requests (weight) and the requests
	// (matches) the routes send to the new revision while no Rollout
	// releases through them. Empty, the routes are left as the user wrote
	// them.
	// +optional
	Strategy TrafficRoutingStrategy `json:"strategy,omitempty"`
}

// TrafficRoutingPhase is the phase of a TrafficRouting.
// +kubebuilder:validation:Enum=Initial;Healthy;Progressing;Finalizing;Terminating
type TrafficRoutingPhase string

const (
	// TrafficRoutingPhaseInitial is a TrafficRouting not reconciled yet.
	TrafficRoutingPhaseInitial TrafficRoutingPhase = "Initial"
	// TrafficRoutingPhaseHealthy is a TrafficRouting whose routes carry
	// its strategy (or are untouched when the strategy is empty).
	TrafficRoutingPhaseHealthy TrafficRoutingPhase = "Healthy"
	// TrafficRoutingPhaseProgressing is a TrafficRouting whose routes are
	// changing to its strategy, or are driven by a releasing Rollout.
	TrafficRoutingPhaseProgressing TrafficRoutingPhase = "Progressing"
	// TrafficRoutingPhaseFinalizing is a TrafficRouting giving its routes
	// back as they were (its strategy became empty, or a Rollout is about
	// to take them).
	TrafficRoutingPhaseFinalizing TrafficRoutingPhase = "Finalizing"
	// TrafficRoutingPhaseTerminating is a deleted TrafficRouting giving its
	// routes back before it goes.
	TrafficRoutingPhaseTerminating TrafficRoutingPhase = "Terminating"
)

// TrafficRoutingStatus is the observed state of a TrafficRouting.
type TrafficRoutingStatus struct {
	// ObservedGeneration is the generation this status is based on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is where the TrafficRouting is.
	// +optional
	Phase TrafficRoutingPhase `json:"phase,omitempty"`

	// Message says what the TrafficRouting is doing or waiting for.
	// +optional
	Message string `json:"message,omitempty"`
}

const (
	// TrafficRoutingFinalizer is the finalizer on a TrafficRouting that
	// gives its routes back before it is deleted.
	TrafficRoutingFinalizer = "rollouts.kruise.io/trafficrouting"

	// ProgressingFinalizerPrefix is the start of the finalizer a Rollout
	// puts on the TrafficRouting it releases through, followed by the
	// Rollout's name.
	ProgressingFinalizerPrefix = "progressing.rollouts.kruise.io/"
)

// V1beta1 returns r in the v1beta1 form of a Rollout's trafficRoutings
// entry.
func (r TrafficRoutingRef) V1beta1() rolloutsv1beta1.TrafficRoutingRef {
	out := rolloutsv1beta1.TrafficRoutingRef{
		Service: r.Service, GracePeriodSeconds: r.GracePeriodSeconds, Ingress: r.Ingress, Gateway: r.Gateway,
	}
	for _, c := range r.CustomNetworkRefs {
		out.CustomNetworkRefs = append(out.CustomNetworkRefs, rolloutsv1beta1.ObjectRef{APIVersion: c.APIVersion, Kind: c.Kind, Name: c.Name})
	}
	return out
}
