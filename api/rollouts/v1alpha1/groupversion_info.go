// Package v1alpha1 contains the rollouts.kruise.io/v1alpha1 Rollout (and BatchRelease) served by
// sluice, field for field compatible with OpenKruise Rollouts v1alpha1, so
// that manifests written for it apply unchanged. Objects are stored as
// v1beta1 and converted by sluice's conversion webhook; see docs/v1alpha1.md
// for the mapping between the two versions.
//
// +kubebuilder:object:generate=true
// +groupName=rollouts.kruise.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "rollouts.kruise.io", Version: "v1alpha1"}

// AddToScheme registers the kinds of this API with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Rollout{}, &RolloutList{}, &BatchRelease{}, &BatchReleaseList{}, &TrafficRouting{}, &TrafficRoutingList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
