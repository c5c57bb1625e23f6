// Package v1alpha1 is the test subset of OpenKruise's apps.kruise.io/v1alpha1
// API: CloneSet, StatefulSet and DaemonSet.
//
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is apps.kruise.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: "apps.kruise.io", Version: "v1alpha1"}

// AddToScheme registers the kinds of this package with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&CloneSet{}, &CloneSetList{},
		&StatefulSet{}, &StatefulSetList{},
		&DaemonSet{}, &DaemonSetList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
