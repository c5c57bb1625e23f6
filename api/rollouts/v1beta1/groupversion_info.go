// Package v1beta1 contains the rollouts.kruise.io/v1beta1 API served by sluice:
// Rollout and BatchRelease, field for field compatible with OpenKruise
// Rollouts v1beta1, so that manifests written for it apply unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=rollouts.kruise.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "rollouts.kruise.io", Version: "v1beta1"}

// AddToScheme registers the kinds of this API with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Rollout{}, &RolloutList{},
		&BatchRelease{}, &BatchReleaseList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
