// Package v1alpha1 contains the gitops.sluice.dev/v1alpha1 API: GitGate, which
// binds Rollouts to the Git repository and the GitHub repository their
// manifests come from, so that pull-request labels and commits approve or roll
// back their releases and commit statuses report their progress.
//
// +kubebuilder:object:generate=true
// +groupName=gitops.sluice.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "gitops.sluice.dev", Version: "v1alpha1"}

// AddToScheme registers the kinds of this API with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &GitGate{}, &GitGateList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
