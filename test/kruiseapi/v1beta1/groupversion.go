// Package v1beta1 is the test subset of OpenKruise's apps.kruise.io/v1beta1
// API: the Advanced StatefulSet, its storage version.
//
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is apps.kruise.io/v1beta1.
var GroupVersion = schema.GroupVersion{Group: "apps.kruise.io", Version: "v1beta1"}

// AddToScheme registers the kinds of this package with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &StatefulSet{}, &StatefulSetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
